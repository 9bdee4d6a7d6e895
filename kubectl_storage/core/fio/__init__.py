"""`kubectl storage fio`: job profiles and job-file checks, fio JSON parsing, statistics over
repeats and classes, baseline comparison."""
