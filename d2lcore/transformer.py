"""Framework-neutral pieces of the Transformer (The Transformer): the layer-norm epsilon and the
checks of shapes and decoder states, shared by the three backends. They look only at
shapes, so they work on any framework's tensors (and on Keras' symbolic shapes, where a
dimension may be None: unknown dimensions are not checked)."""

LAYER_NORM_EPS = 1e-5
"""The epsilon of every AddNorm's layer normalisation, in every framework (PyTorch's and
MXNet's default; Keras' default, 1e-3, is overridden)."""


def _dims(shape):
    return tuple(None if d is None else int(d) for d in shape)


def check_width(name, shape, width, batch=None):
    """Check that ``shape`` is (batch, steps, width); returns it as a tuple of ints.

    ``width`` is the model's num_hiddens: the residual connections add a block's input to
    its output, so they must have the same last dimension."""
    dims = _dims(shape)
    if len(dims) != 3:
        raise ValueError(
            f"{name} must have shape (batch, steps, num_hiddens={width}); got {dims}"
        )
    if dims[2] is not None and dims[2] != width:
        raise ValueError(
            f"{name}'s last dimension must be num_hiddens = {width} (the residual "
            f"connections add inputs and outputs of that size); got shape {dims}. Make "
            "the model's num_hiddens match its inputs."
        )
    if batch is not None and dims[0] is not None and dims[0] != batch:
        raise ValueError(
            f"{name} must hold the same batch as the decoder's input ({batch} examples); "
            f"got shape {dims}"
        )
    return dims


def _described(value):
    """``value``'s type, and its length where it has one: "tuple of 2 entries"."""
    size = f" of {len(value)} entries" if isinstance(value, (tuple, list)) else ""
    return f"{type(value).__name__}{size}"


def check_decoder_state(state, num_layers, num_hiddens, batch=None):
    """Check a TransformerDecoder state (enc_outputs, enc_valid_lens, caches) and return
    ``past``, the number of positions its caches hold (0 when they are all None).

    enc_outputs: (batch, src_steps, num_hiddens); enc_valid_lens: None or (batch,);
    caches: num_layers entries, all None (nothing decoded yet) or all
    (batch, past, num_hiddens) with the same past. ``batch``, if given, is the batch of
    the decoder's input."""
    how = (
        "build it with decoder.init_state(enc_outputs, enc_valid_lens) and pass on the "
        "state that each decoder call returns"
    )
    if not isinstance(state, (tuple, list)) or len(state) != 3:
        raise ValueError(
            "a TransformerDecoder state must be a tuple (enc_outputs, enc_valid_lens, caches); "
            f"got {_described(state)}: {how}"
        )
    enc_outputs, enc_valid_lens, caches = state
    if batch is None:
        batch = _dims(enc_outputs.shape)[0] if len(enc_outputs.shape) else None
    check_width("enc_outputs", enc_outputs.shape, num_hiddens, batch)
    if enc_valid_lens is not None:
        lens = _dims(enc_valid_lens.shape)
        if len(lens) != 1 or (None not in (lens[0], batch) and lens[0] != batch):
            raise ValueError(
                f"enc_valid_lens must be None or have shape (batch,) = ({batch},); got "
                f"shape {lens}"
            )
    if not isinstance(caches, (tuple, list)) or len(caches) != num_layers:
        raise ValueError(
            f"the state's caches must be a tuple of num_layers = {num_layers} entries, "
            f"one per decoder block; got {caches!r:.80}: {how}"
        )
    if all(cache is None for cache in caches):
        return 0
    if any(cache is None for cache in caches):
        raise ValueError(
            "the state's caches must be all None (nothing decoded yet) or all tensors; "
            f"got a mix: {how}"
        )
    pasts = {check_width("a cache", c.shape, num_hiddens, batch)[1] for c in caches}
    if len(pasts) != 1:
        raise ValueError(
            f"every layer's cache must hold the same number of positions; got {pasts}: "
            f"{how}"
        )
    return pasts.pop()
