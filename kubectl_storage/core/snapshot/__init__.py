"""`kubectl storage snapshot`: snapshot listing, class choice, restore plans, the restore check."""
