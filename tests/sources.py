"""What the tests' small section sources share."""

FRONT_MATTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
"""The front matter of a section source (a MyST Markdown notebook of the Python 3 kernel)."""
