"""Dataset output: Hugging Face folders, output files, atomic publishing (local or remote)."""
