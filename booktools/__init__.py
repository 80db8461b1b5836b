"""The book's build tools: split the MyST sources into per-framework notebooks, execute them (cached), merge them
into one notebook per page, and build the HTML book with Jupyter Book. Run ``python -m booktools --help``."""
