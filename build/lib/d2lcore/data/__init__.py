"""The data the book ships, installed as the package data of ``d2lcore.data`` (see ``pyproject.toml``).

``d2lcore.datasets.data_dir()`` finds it with :mod:`importlib.resources`, in a wheel as well as in a clone of the
repository. There is no code here.
"""
