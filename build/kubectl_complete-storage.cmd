@echo off
rem kubectl_complete-storage: kubectl (1.26 and later) runs this from PATH to complete
rem `kubectl storage ...`; see build/kubectl_complete-storage. It asks the kubectl-storage.exe
rem next to it, else the one on PATH, for cobra's __complete answer.
if exist "%~dp0kubectl-storage.exe" (
  "%~dp0kubectl-storage.exe" __complete %* 2>nul
) else (
  kubectl-storage.exe __complete %* 2>nul
)
exit /b 0
