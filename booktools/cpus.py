"""Another CPU, imitated: the environment variables that keep each library off the vector instructions it would
pick on this machine, so that ``make nbval`` proves the checked outputs on a CPU other than the one that
recorded them.

NumPy, PyTorch, oneDNN (PyTorch's, MXNet's and TensorFlow's), MKL (PyTorch's BLAS) and OpenBLAS (NumPy's and
MXNet's BLAS) choose their kernels when they start, by the CPU's features. Their outputs may differ in the last
bits between CPUs, and a checked cell must print the same text on every one. ``make expected-outputs`` records
on this machine's own CPU (AVX-512 where it has it); ``make nbval`` compares under :data:`RESTRICTED`, an AVX2
machine without AVX-512: a checked cell that passes both prints the same on both. TensorFlow's own kernels
(Eigen) are chosen when the wheel is built, not at run time: nothing to restrict there beyond oneDNN.
"""

RESTRICTED = {
    # NumPy's SIMD kernels (NumPy 1.22 and later): no AVX-512 of any generation
    "NPY_DISABLE_CPU_FEATURES": "AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL",
    "ATEN_CPU_CAPABILITY": "avx2",  # PyTorch's own kernels
    "ONEDNN_MAX_CPU_ISA": "AVX2",  # oneDNN 3 (PyTorch; TensorFlow where its oneDNN is on)
    "DNNL_MAX_CPU_ISA": "AVX2",  # oneDNN 2 (MXNet 1.9)
    "MKL_ENABLE_INSTRUCTIONS": "AVX2",  # MKL, PyTorch's BLAS
    "OPENBLAS_CORETYPE": "Haswell",  # OpenBLAS (NumPy's, MXNet's): its AVX2 kernels
}
"""The imitated CPU: AVX2 and FMA, no AVX-512 (a Haswell-class x86-64 machine)."""

CPUS = {"restricted": RESTRICTED, "native": {}}
"""The CPU settings ``make nbval CPU=...`` accepts: ``restricted`` (the default) or ``native``."""
