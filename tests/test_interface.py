"""Every framework module of d2lcore offers exactly the interface of d2lcore.interface, with the same signatures."""

import importlib
import inspect
import subprocess
import sys
import types

import pytest

from d2lcore import FRAMEWORKS, MODULE_OF, interface
from d2lcore.frameworks import REGISTRY

# For a layer, the interface's `forward` is the method that calling the layer runs.
FORWARD = {fw.name: fw.forward for fw in REGISTRY.values()}


def public_names(module):
    """The public names of a module, without its own submodules (re-exported modules such as plt count)."""
    names = set()
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, types.ModuleType) and value.__name__.startswith(module.__name__ + "."):
            continue
        names.add(name)
    return names


INTERFACE = {
    name
    for name, value in vars(interface).items()
    if not name.startswith("_")
    and (inspect.isfunction(value) or inspect.isclass(value) or name == "plt" or name.isupper())
}
"""The interface's functions, classes and constants (UPPER_CASE names), and plt."""


# The one constructor that differs (the interface's docstring says so): PyTorch's nn.LayerNorm is built for its
# width, so PyTorch's AddNorm takes num_hiddens too
OWN_INIT = {("pytorch", "AddNorm"): "(self, num_hiddens, dropout)"}


def without_training(signature):
    """Keras passes ``training`` to ``call`` only if ``call`` declares it: the one allowed extra parameter."""
    params = list(signature.parameters.values())
    if params and params[-1].name == "training" and params[-1].default is None:
        params = params[:-1]
    return signature.replace(parameters=params)


def methods(cls):
    return {
        name: value
        for name, value in vars(cls).items()
        if inspect.isfunction(value) and name != "__init__"
    }


def test_interface_is_not_empty():
    assert {"show_heatmaps", "try_gpu", "set_seed", "NWKernelRegression", "train_nw"} <= INTERFACE


def test_importing_d2lcore_imports_no_framework():
    code = (
        "import sys, d2lcore, d2lcore.interface, d2lcore.plotting, d2lcore.checks, d2lcore.timer;"
        "loaded = {'mxnet', 'torch', 'tensorflow', 'keras'} & set(sys.modules);"
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_exactly_the_interface_names(framework):
    module = importlib.import_module(MODULE_OF[framework])
    names = public_names(module)
    assert names - INTERFACE == set(), f"{module.__name__} has public names the interface lacks"
    assert INTERFACE - names == set(), f"{module.__name__} lacks names of the interface"
    assert set(module.__all__) == INTERFACE


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("name", sorted(INTERFACE - {"plt"}))
def test_same_signature(framework, name):
    module = importlib.import_module(MODULE_OF[framework])
    spec, impl = getattr(interface, name), getattr(module, name)
    if name.isupper():  # a constant: the same value
        assert impl == spec, name
        return
    if inspect.isfunction(spec):
        assert inspect.isfunction(impl), f"{name} should be a function"
        assert inspect.signature(impl) == inspect.signature(spec)
        return
    assert inspect.isclass(impl), f"{name} should be a class"
    if (framework, name) in OWN_INIT:
        assert str(inspect.signature(impl.__init__)) == OWN_INIT[framework, name]
    else:
        assert inspect.signature(impl.__init__) == inspect.signature(spec.__init__)
    for method, spec_fn in methods(spec).items():
        impl_name = FORWARD[framework] if method == "forward" else method
        impl_fn = getattr(impl, impl_name, None)
        assert impl_fn is not None, f"{name}.{impl_name} is missing"
        impl_sig = inspect.signature(impl_fn)
        if framework == "tensorflow" and method == "forward":
            impl_sig = without_training(impl_sig)
        assert impl_sig == inspect.signature(spec_fn), f"{name}.{impl_name}"


def test_neutral_names_are_one_object():
    """Framework-neutral names are the same object in every module: the code lives once."""
    modules = [importlib.import_module(MODULE_OF[fw]) for fw in FRAMEWORKS]
    neutral = """show_heatmaps plot Animator Timer check_int check_shapes to_numpy plt read_data_nmt
    preprocess_nmt tokenize_nmt Vocab truncate_pad build_array_nmt download download_extract bleu corpus_scores
    Translation translate_corpus evaluate_translations
    xavier_uniform_weights last_query check_heads valid_lens_spec check_lengths check_positions
    LAYER_NORM_EPS show_record show_training"""
    for name in neutral.split():
        assert len({id(getattr(m, name)) for m in modules}) == 1, name
