"""Dataset output: Hugging Face folders, Beam file writing, atomic publishing."""
