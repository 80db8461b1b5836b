"""Argument checks shared by all frameworks, with error messages that say what was expected."""

import re

import numpy

from d2lcore.boundary import NEUTRAL
from d2lcore.convert import to_numpy

_DIM = re.compile(r"^(\d+|[A-Za-z_]\w*)$")


def _shape_of(x):
    shape = getattr(x, "shape", None)
    if shape is None:
        return None
    return tuple(None if d is None else int(d) for d in shape)


def check_shapes(**named):
    """Check tensor shapes against named dimensions and return the sizes found.

    Each keyword is an argument name; its value is a pair ``(tensor, spec)``, where ``spec`` names the
    dimensions separated by spaces, e.g. ``"batch queries keys"``. A number fixes a dimension's size; a name must
    have the same size wherever it appears. Example::

        dims = check_shapes(queries=(q, "n"), keys=(k, "n m"), values=(v, "n m"))  # dims == {"n": .., "m": ..}

    Raises ``TypeError`` if an argument is not a tensor and ``ValueError`` naming the argument and the expected
    shape if a rank or a size is wrong.
    """
    sizes = {}
    for arg, (x, spec) in named.items():
        dims = spec.split()
        if not all(_DIM.match(d) for d in dims):
            raise ValueError(
                f"bad shape spec {spec!r} for {arg!r}: use names or numbers separated by spaces"
            )
        shape = _shape_of(x)
        if shape is None:
            raise TypeError(
                f"{arg} must be a tensor of shape ({', '.join(dims)}); got {type(x).__name__}"
            )
        if len(shape) != len(dims):
            raise ValueError(
                f"{arg} must have {len(dims)} dimension(s), shape ({', '.join(dims)}); got shape {shape}"
            )
        for d, n in zip(dims, shape, strict=True):
            if n is None:
                continue
            expected = int(d) if d.isdigit() else sizes.setdefault(d, n)
            if n != expected:
                known = ", ".join(
                    d if d.isdigit() else str(sizes.get(d, d)) for d in dims
                )
                why = (
                    "" if d.isdigit() else f" ({d} = {expected} from the other arguments)"
                )
                raise ValueError(
                    f"{arg} must have shape ({', '.join(dims)}) = ({known}); got shape {shape}{why}"
                )
    return sizes


def check_int(name, value, minimum=None):
    """Check that ``value`` is a Python integer (not a bool) of at least ``minimum``; return it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int; got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    return value


def check_weights_fit(expected, given):
    """For load_weights: ``given`` {name: array} must have exactly the names of ``expected``
    {name: array}, with the same shapes; else ValueError listing every problem."""
    missing = [name for name in expected if name not in given]
    unexpected = [name for name in given if name not in expected]
    mismatched = [
        f"{name}: expected {expected[name].shape}, got {tuple(given[name].shape)}"
        for name in expected
        if name in given and tuple(given[name].shape) != expected[name].shape
    ]
    problems = []
    if missing:
        problems.append(f"missing {missing}")
    if unexpected:
        problems.append(f"unexpected {unexpected}")
    if mismatched:
        problems.append(f"wrong shapes [{'; '.join(mismatched)}]")
    if problems:
        raise ValueError(
            "load_weights: the weights must have exactly the layer's names and shapes; "
            "got " + ", ".join(problems)
        )


def check_heads(num_hiddens, num_heads):
    """Check that ``num_heads`` is an int >= 1 that divides ``num_hiddens`` (each head gets
    num_hiddens / num_heads features); ``num_hiddens`` None (not known yet) is not checked.
    Returns num_heads."""
    check_int("num_heads", num_heads, minimum=1)
    if num_hiddens is not None and num_hiddens % num_heads:
        raise ValueError(
            f"num_hiddens ({num_hiddens}) must be divisible by num_heads ({num_heads}), as "
            "each head gets num_hiddens / num_heads features; got a remainder of "
            f"{num_hiddens % num_heads}"
        )
    return num_heads


def valid_lens_spec(valid_lens, queries="queries"):
    """The shape of ``valid_lens`` for :func:`check_shapes`: ``"batch"`` for (batch,) lengths,
    one per example, or ``"batch <queries>"`` for (batch, queries) lengths, one per query.
    Raises ValueError for any other rank."""
    shape = _shape_of(valid_lens)
    if shape is None or len(shape) not in (1, 2):
        raise ValueError(
            f"valid_lens must have shape (batch,) or (batch, queries); got shape {shape}"
        )
    return "batch" if len(shape) == 1 else f"batch {queries}"


def check_lengths(name, values):
    """Check that the lengths ``values`` (a NumPy array, e.g. of valid_lens) are whole
    numbers >= 0 (integers, or floats that are whole numbers); ValueError listing them
    otherwise, TypeError for booleans (a mask is not a length) and other dtypes."""
    values = numpy.asarray(values)
    if values.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold lengths (integers); got dtype {values.dtype}"
            + (": a boolean mask is not a length" if values.dtype.kind == "b" else "")
        )
    if not numpy.isfinite(values).all() or (values != values.round()).any():
        raise ValueError(f"{name} must hold whole numbers; got {values.tolist()}")
    if (values < 0).any():
        raise ValueError(f"{name} must be >= 0; got {values.tolist()}")


def check_positions(X, num_hiddens, offset, max_len):
    """For a positional encoding: X (batch, steps, num_hiddens) takes the positions offset,
    ..., offset + steps - 1 of a table of ``max_len`` positions. Returns steps (None when it
    is unknown, as in a traced TensorFlow graph: the caller checks it when it runs)."""
    steps = check_shapes(X=(X, "batch steps num_hiddens")).get("steps")
    shape = _shape_of(X)
    if shape[-1] not in (None, num_hiddens):
        raise ValueError(
            f"X's last dimension must be num_hiddens = {num_hiddens}; got X of shape {shape}"
        )
    check_int("offset", offset, minimum=0)
    if steps is not None and offset + steps > max_len:
        raise ValueError(
            f"positions {offset} ... {offset + steps - 1} do not fit in the table of "
            f"max_len = {max_len} positions (got X with {steps} steps at offset {offset}): "
            "raise max_len"
        )
    return steps


# --- numbers, layers' sizes and vocabularies (every framework) -------------------------------------------


def check_real(name, value, minimum=None, below=None, above=None, finite=True):
    """Check that ``value`` is a real number (an int or a float, not a bool or a str),
    finite unless ``finite`` is False, with ``value >= minimum``, ``value < below`` and
    ``value > above`` (each bound when not None); return it as a float."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{name} must be a number (an int or a float); got {type(value).__name__} "
            f"{value!r:.60}"
        )
    value = float(value)
    if value != value or (finite and abs(value) == float("inf")):
        raise ValueError(f"{name} must be a finite number; got {value}")
    for bound, ok, op in (
        (minimum, minimum is None or value >= minimum, ">="),
        (below, below is None or value < below, "<"),
        (above, above is None or value > above, ">"),
    ):
        if not ok:
            raise ValueError(f"{name} must be {op} {bound}; got {value}")
    return value


def check_dropout(dropout):
    """Check a dropout probability: a number with 0 <= dropout < 1; return it as a float."""
    return check_real("dropout", dropout, minimum=0, below=1)


def check_sizes(**sizes):
    """Check a layer's size arguments, e.g. ``check_sizes(vocab_size=v, num_hiddens=h)``:
    each an int >= 1."""
    for name, value in sizes.items():
        check_int(name, value, minimum=1)


def check_vocab(name, vocab, tokens):
    """Check that ``vocab`` (a :class:`d2lcore.text.Vocab`) holds the reserved ``tokens``,
    e.g. ``("<bos>", "<eos>")``: without them a lookup would give ``<unk>`` silently."""
    if not hasattr(vocab, "to_tokens") or not hasattr(vocab, "__contains__"):
        raise TypeError(
            f"{name} must be a d2lcore Vocab; got {type(vocab).__name__} {vocab!r:.60}"
        )
    missing = [t for t in tokens if t not in vocab]
    if missing:
        raise ValueError(
            f"{name} must hold the reserved tokens {list(tokens)}; got one without {missing}: "
            "build it with reserved_tokens=['<pad>', '<bos>', '<eos>']"
        )


def check_built_widths(layer, **inputs):
    """For a layer whose input sizes are inferred on its first call, e.g.
    ``check_built_widths(self, queries=queries, keys=keys)``: remember the last dimension of
    each input at the first call, and raise ValueError when a later call gives another one
    (the weights were built for the first). Unknown sizes (None, in a traced graph) are
    not checked."""
    widths = layer.__dict__.setdefault("_d2l_input_widths", {})
    for name, X in inputs.items():
        shape = _shape_of(X)
        size = shape[-1] if shape else None
        built = widths.get(name)
        if None not in (built, size) and built != size:
            raise ValueError(
                f"{name}'s last dimension must be {built}, the size this "
                f"{type(layer).__name__} was built for on its first call; got {name} of "
                f"shape {shape}: make a new layer for inputs of another size"
            )
        if built is None:
            widths[name] = size


# --- tensors' contents: the messages, for the hooks of each framework (d2lcore.<framework>.checks) ---------


def dtype_error(name, dtype, expected):
    """The TypeError for a tensor ``name`` of ``dtype`` where ``expected`` (e.g. "a
    floating-point") was needed."""
    return TypeError(
        f"{name} must be {expected} tensor; got dtype {dtype}"
        + (
            ": convert it first (e.g. X.float() in PyTorch, X.astype('float32') in MXNet, "
            "tf.cast(X, tf.float32) in TensorFlow)"
            if "float" in expected
            else ": token indices are whole numbers (e.g. int32 or int64)"
        )
    )


def token_ids_error(name, ids, vocab_size):
    """The ValueError for token indices ``ids`` (NumPy) outside 0 ... vocab_size - 1."""
    bad = ids[(ids < 0) | (ids >= vocab_size)]
    return ValueError(
        f"{name} must hold token indices 0 ... {vocab_size - 1} (vocab_size = "
        f"{vocab_size}); got {bad.size} out of range, e.g. {sorted(set(bad.tolist()))[:5]}"
        ": was the model built for another vocabulary?"
    )


def check_tuple(name, value, fields):
    """Check that ``value`` is a tuple (or list) of the ``fields`` (their names, e.g.
    ``("outputs", "hidden")``), as a decoder's state is; return it as a tuple."""
    if not isinstance(value, tuple | list) or len(value) != len(fields):
        raise TypeError(
            f"{name} must be a tuple ({', '.join(fields)}); got {type(value).__name__}"
            + (f" of {len(value)} entries" if isinstance(value, tuple | list) else "")
        )
    return tuple(value)


def check_steps(name, steps):
    """Check that a sequence batch ``name`` has at least one time step (``steps``: its size,
    None when unknown)."""
    if steps is not None and steps < 1:
        raise ValueError(
            f"{name} must have at least one time step, shape (batch, steps >= 1); got "
            f"{steps} steps"
        )


def check_epoch_tokens(epoch, tokens):
    """For a training loop: epoch ``epoch`` (counted from 0) saw ``tokens`` target tokens;
    none means a loss of 0 / 0, so raise ValueError saying why that happens."""
    if tokens == 0:
        raise ValueError(
            f"data_iter must give target tokens in every epoch; got none in epoch {epoch + 1}: "
            "it is empty, used up (a generator can be read only once: use load_array), or "
            "every Y_valid_len is 0"
        )


def not_implemented(layer, method):
    """The NotImplementedError of a base class's ``method`` (Encoder, Decoder,
    AttentionDecoder) called on ``layer``, which does not define it."""
    return NotImplementedError(
        f"{type(layer).__name__} does not define {method}: Encoder, Decoder and "
        f"AttentionDecoder are base classes; subclass one and define {method} (as "
        "Seq2SeqEncoder and Seq2SeqAttentionDecoder do)"
    )


def check_bool(name, value):
    """Check that ``value`` is a bool (True or False), as a layer's ``bias`` switch; return
    it. A string such as "False" would count as True."""
    if not isinstance(value, bool):
        raise TypeError(
            f"{name} must be True or False; got {type(value).__name__} {value!r:.60}"
        )
    return value


def check_training_points(n):
    """For a regression's training loop: the number ``n`` of training points (queries and
    targets) must be at least 1; none would give a loss of 0 and no update, silently."""
    if n is not None and n < 1:
        raise ValueError(
            "queries and targets must hold at least one training point, shape (n >= 1,); "
            f"got n = {n}"
        )


SEQ2SEQ_BATCH = ("X", "X_valid_len", "Y", "Y_valid_len")


def check_seq2seq_batch(batch):
    """For a training loop: check that a batch of ``data_iter`` is (X, X_valid_len, Y,
    Y_valid_len) of shapes (batch, steps), (batch,), (batch, tgt_steps), (batch,), as
    load_data_nmt gives; return it as a tuple. Looks only at shapes: no wait."""
    expected = (
        "each batch of data_iter must be 4 tensors (X, X_valid_len, Y, Y_valid_len) of "
        "shapes (batch, steps), (batch,), (batch, tgt_steps), (batch,), as load_data_nmt gives"
    )
    if not isinstance(batch, tuple | list) or len(batch) != len(SEQ2SEQ_BATCH):
        size = f" of {len(batch)} items" if isinstance(batch, tuple | list) else ""
        raise TypeError(f"{expected}; got a {type(batch).__name__}{size}")
    X, X_valid_len, Y, Y_valid_len = batch
    try:
        check_shapes(
            X=(X, "batch steps"),
            X_valid_len=(X_valid_len, "batch"),
            Y=(Y, "batch tgt_steps"),
            Y_valid_len=(Y_valid_len, "batch"),
        )
    except (TypeError, ValueError) as error:
        raise type(error)(f"{expected}: {error}") from None
    return tuple(batch)


# --- a layer's call as a whole, with each framework's hooks (d2lcore.<framework>.checks) ----------------------


def check_encoder_lengths(enc_outputs, enc_valid_lens, to_lengths):
    """Check ``enc_valid_lens``: None, or (batch,) whole numbers >= 0 for ``enc_outputs``
    (batch, src_steps, num_hiddens). ``to_lengths`` is the framework's hook that gives
    them as NumPy, or None where the values are unknown (a traced TensorFlow graph)."""
    if enc_valid_lens is not None:
        check_shapes(
            enc_outputs=(enc_outputs, "batch steps h"),
            enc_valid_lens=(enc_valid_lens, "batch"),
        )
        lengths = to_lengths(enc_valid_lens)
        if lengths is not None:
            check_lengths("enc_valid_lens", lengths)


def check_decoder_init(enc_outputs, enc_valid_lens, to_lengths):
    """For an RNN attention decoder's ``init_state``: ``enc_outputs`` is the encoder's
    (outputs (batch, src_steps, num_hiddens), state (num_layers, batch, num_hiddens)), and
    ``enc_valid_lens`` None or (batch,) lengths; returns (outputs, state)."""
    outputs, hidden = check_tuple("enc_outputs", enc_outputs, ("outputs", "state"))
    check_encoder_lengths(outputs, enc_valid_lens, to_lengths)
    return outputs, hidden


def check_decoder_call(X, state, vocab_size, check_token_ids, to_lengths):
    """For an RNN attention decoder's forward: X (batch, steps >= 1) holds token indices
    0 ... vocab_size - 1, and ``state`` is (enc_outputs (batch, src_steps, num_hiddens),
    hidden, enc_valid_lens None or (batch,)); returns ``state`` as a tuple.
    ``check_token_ids`` and ``to_lengths`` are the framework's hooks."""
    enc_outputs, hidden, enc_valid_lens = check_tuple(
        "state", state, ("enc_outputs", "hidden", "enc_valid_lens")
    )
    dims = check_shapes(
        X=(X, "batch steps"), enc_outputs=(enc_outputs, "batch src_steps h")
    )
    check_steps("X", dims.get("steps"))
    check_token_ids("X", X, vocab_size)
    check_encoder_lengths(enc_outputs, enc_valid_lens, to_lengths)
    return enc_outputs, hidden, enc_valid_lens


def check_context_state(X, state, num_layers, num_hiddens):
    """For the decoder without attention (Seq2SeqDecoder): X (batch, steps >= 1), and
    ``state`` (context (batch, num_hiddens), hidden (num_layers, batch, num_hiddens)), as
    its ``init_state`` gives; returns the state as a tuple. The framework checks the token
    indices and the dtypes."""
    context, hidden = check_tuple("state", state, ("context", "hidden"))
    dims = check_shapes(
        X=(X, "batch steps"),
        context=(context, f"batch {num_hiddens}"),
        hidden=(hidden, f"{num_layers} batch {num_hiddens}"),
    )
    check_steps("X", dims.get("steps"))
    return context, hidden


def check_attention_to_save(net, save_attention_weights):
    """For predict_seq2seq: saving the attention weights needs a decoder that has them."""
    if save_attention_weights and not hasattr(type(net.decoder), "attention_weights"):
        raise ValueError(
            "save_attention_weights=True needs a decoder with attention weights (an "
            f"AttentionDecoder); got {type(net.decoder).__name__}, which has none"
        )


def decoder_checks(check_token_ids, to_lengths):
    """The RNN attention decoder's checks for one framework, bound to its hooks
    (``check_token_ids``; ``to_lengths``, lengths as NumPy or None where unknown): returns
    (check_decoder_init(enc_outputs, enc_valid_lens), check_decoder_call(X, state,
    vocab_size)), as :func:`check_decoder_init` and :func:`check_decoder_call`."""

    def check_decoder_init_bound(enc_outputs, enc_valid_lens):
        """See :func:`check_decoder_init`; returns (outputs, state)."""
        return check_decoder_init(enc_outputs, enc_valid_lens, to_lengths)

    def check_decoder_call_bound(X, state, vocab_size):
        """See :func:`check_decoder_call`; returns ``state`` as a tuple."""
        return check_decoder_call(X, state, vocab_size, check_token_ids, to_lengths)

    return check_decoder_init_bound, check_decoder_call_bound


def check_add_norm(layer, X, Y):
    """For AddNorm ``layer``'s call on X, Y (..., d): X has the width the layer was built for
    (see :func:`check_built_widths`), and Y the same shape as X, since they are added (an
    unknown dimension, None in a traced graph, matches any)."""
    check_built_widths(layer, X=X)
    x, y = _shape_of(X), _shape_of(Y)
    if len(x) != len(y) or any(None not in (a, b) and a != b for a, b in zip(x, y)):
        raise ValueError(
            f"AddNorm adds X and Y, so they must have the same shape; got X {x} and Y {y}"
        )


# --- The checks of the framework-neutral taught code, attached by @checked (d2lcore.boundary) ---------------------


def checked(obj):
    """Attach the framework-neutral checks registered under the name of ``obj`` (d2lcore.boundary.NEUTRAL);
    returns the class, or the checked function. A framework's own ``checked`` finds these checks too."""
    return NEUTRAL.checked(obj)


# The constructors of the taught layers take the same arguments in every framework, so their checks live here once
# (a framework's own registry, d2lcore/<framework>/checks.py, holds those that differ, such as AddNorm's).


@NEUTRAL.init("AdditiveAttention")
def _additive_attention_init(num_hiddens, dropout):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_dropout(dropout)


@NEUTRAL.init("DotProductAttention")
def _dot_product_attention_init(dropout):
    check_dropout(dropout)


@NEUTRAL.init("MultiHeadAttention")
def _multihead_attention_init(num_hiddens, num_heads, dropout, bias=False):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_heads(num_hiddens, num_heads)
    check_dropout(dropout)
    check_bool("bias", bias)


@NEUTRAL.init("PositionalEncoding")
def _positional_encoding_init(num_hiddens, dropout, max_len=1000):
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_int("max_len", max_len, minimum=1)
    check_dropout(dropout)


@NEUTRAL.init("Seq2SeqEncoder")
@NEUTRAL.init("Seq2SeqDecoder")
@NEUTRAL.init("Seq2SeqAttentionDecoder")
def _seq2seq_init(vocab_size, embed_size, num_hiddens, num_layers, dropout=0):
    check_sizes(vocab_size=vocab_size, embed_size=embed_size)
    check_sizes(num_hiddens=num_hiddens, num_layers=num_layers)
    check_dropout(dropout)


@NEUTRAL.init("PositionWiseFFN")
def _position_wise_ffn_init(ffn_num_hiddens, ffn_num_outputs):
    check_int("ffn_num_hiddens", ffn_num_hiddens, minimum=1)
    check_int("ffn_num_outputs", ffn_num_outputs, minimum=1)


@NEUTRAL.init("TransformerEncoderBlock")
@NEUTRAL.init("TransformerDecoderBlock")
def _transformer_block_init(
    num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False
):
    check_bool("use_bias", use_bias)
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_heads(num_hiddens, num_heads)
    check_int("ffn_num_hiddens", ffn_num_hiddens, minimum=1)
    check_dropout(dropout)


@NEUTRAL.init("TransformerEncoder")
@NEUTRAL.init("TransformerDecoder")
def _transformer_init(
    vocab_size,
    num_hiddens,
    ffn_num_hiddens,
    num_heads,
    num_layers,
    dropout,
    use_bias=False,
    max_len=1000,
):
    check_bool("use_bias", use_bias)
    check_int("vocab_size", vocab_size, minimum=1)
    check_int("num_hiddens", num_hiddens, minimum=1)
    check_heads(num_hiddens, num_heads)
    check_int("num_layers", num_layers, minimum=1)
    check_int("ffn_num_hiddens", ffn_num_hiddens, minimum=1)
    check_dropout(dropout)
    check_int("max_len", max_len, minimum=1)


def check_translation_ids(net, src, bos, vocab_size):
    """For predict_seq2seq, inside which the model's own checks do not run: check that the encoded source ``src``
    (a list of token indices) and the index ``bos`` of <bos> are token indices of the embeddings of ``net``'s
    encoder and decoder. ``vocab_size(part)``: the number of token indices that ``part`` embeds, or None (then
    that part is not checked)."""
    for name, ids, part in (
        ("X (the encoded src_sentence)", numpy.array(src), net.encoder),
        ("tgt_vocab['<bos>']", numpy.array([bos]), net.decoder),
    ):
        size = vocab_size(part)
        if size is not None and ((ids < 0) | (ids >= size)).any():
            raise token_ids_error(name, ids, size)


def _check_str(name, value, what="a str"):
    if not isinstance(value, str):
        raise TypeError(f"{name} must be {what}; got {type(value).__name__}")


@NEUTRAL.call("preprocess_nmt")
def _preprocess_nmt(text):
    _check_str("text", text)


@NEUTRAL.call("tokenize_nmt")
def _tokenize_nmt(text, num_examples=None):
    _check_str("text", text)
    if num_examples is not None:
        check_int("num_examples", num_examples, minimum=1)


def _check_tokens(tokens):
    """``tokens``: a list of str tokens, or a list of lists of them."""
    if isinstance(tokens, str):
        raise TypeError(
            "tokens must be a list of tokens or a list of token lists, not a str: "
            "split the text into tokens first"
        )
    for item in tokens:
        for token in item if isinstance(item, list | tuple) else [item]:
            if not isinstance(token, str):
                raise TypeError(
                    f"tokens must be str; got {type(token).__name__} {token!r}"
                )


@NEUTRAL.init("Vocab")
def _vocab_init(tokens=None, min_freq=0, reserved_tokens=None):
    check_int("min_freq", min_freq, minimum=0)
    reserved = [] if reserved_tokens is None else list(reserved_tokens)
    if isinstance(reserved_tokens, str) or not all(isinstance(t, str) for t in reserved):
        raise TypeError(
            f"reserved_tokens must be a list of str, e.g. ['<pad>', '<bos>', '<eos>']; "
            f"got {reserved_tokens!r}"
        )
    if "<unk>" in reserved:
        raise ValueError("'<unk>' is always index 0: leave it out of reserved_tokens")
    repeated = sorted({t for t in reserved if reserved.count(t) > 1})
    if repeated:
        raise ValueError(f"reserved_tokens has duplicates: {repeated}")
    if tokens is not None:
        _check_tokens(tokens)


@NEUTRAL.call("truncate_pad")
def _truncate_pad(line, num_steps, padding_token):
    check_int("num_steps", num_steps, minimum=1)
    if isinstance(line, str | bytes) or not hasattr(line, "__iter__"):
        raise TypeError(
            f"line must be a list of tokens or indices; got {type(line).__name__} "
            f"{line!r:.40}"
            + (": split it into tokens first" if isinstance(line, str) else "")
        )


@NEUTRAL.call("build_array_nmt")
def _build_array_nmt(lines, vocab, num_steps):
    check_int("num_steps", num_steps, minimum=1)
    missing = [t for t in ("<eos>", "<pad>") if t not in vocab]
    if missing:
        raise ValueError(
            f"vocab lacks {missing}, which build_array_nmt needs; got {vocab!r}: build it with "
            "reserved_tokens=['<pad>', '<bos>', '<eos>']"
        )
    lines = list(lines)
    for i, line in enumerate(lines):
        if not isinstance(line, list | tuple):
            raise TypeError(
                f"lines must be a list of token lists; lines[{i}] is a {type(line).__name__}"
            )
    return (lines, vocab, num_steps), {}  # a generator of lines is read once, here


@NEUTRAL.call("nmt_arrays")
def _nmt_arrays(num_steps, num_examples=600):
    check_int("num_steps", num_steps, minimum=1)
    check_int(
        "num_examples", num_examples, minimum=1
    )  # tokenize_nmt's, which runs inside


@NEUTRAL.call("reversal_pairs")
def _reversal_pairs(num_examples, num_symbols=8, min_len=5, max_len=8, seed=0):
    check_int("num_examples", num_examples, minimum=1)
    check_int("num_symbols", num_symbols, minimum=1)
    if num_symbols > 26:
        raise ValueError(
            f"num_symbols must be at most 26 (the lowercase letters); got {num_symbols}"
        )
    check_int("min_len", min_len, minimum=1)
    check_int("max_len", max_len)
    if max_len < min_len:
        raise ValueError(f"max_len must be >= min_len = {min_len}; got max_len={max_len}")
    check_int("seed", seed, minimum=0)


@NEUTRAL.call("reversal_arrays")
def _reversal_arrays(
    num_examples, num_steps, num_symbols=8, min_len=5, max_len=8, seed=0
):
    _reversal_pairs(num_examples, num_symbols, min_len, max_len, seed)
    check_int("num_steps", num_steps, minimum=1)
    if num_steps < max_len + 1:
        raise ValueError(
            f"num_steps must be at least max_len + 1 = {max_len + 1}, so that every row keeps "
            f"its <eos>; got num_steps={num_steps}"
        )


@NEUTRAL.call("neighbour_arrays")
def _neighbour_arrays(num_examples, num_steps=8, num_symbols=8, seed=0):
    check_int("num_examples", num_examples, minimum=1)
    check_int(
        "num_steps", num_steps, minimum=3
    )  # two neighbours other than the position itself
    check_int("num_symbols", num_symbols, minimum=1)
    check_int("seed", seed, minimum=0)


@NEUTRAL.call("show_neighbour_heads")
def _show_neighbour_heads(weights):
    shape = numpy.shape(to_numpy(weights))
    if len(shape) != 4 or shape[2] != shape[3] or 0 in shape:
        raise ValueError(
            "weights must have shape (batch, num_heads, n, n), self-attention over n positions, "
            f"none of them 0; got {shape}"
        )


@NEUTRAL.call("encode_source")
def _encode_source(src_sentence, src_vocab, num_steps):
    _check_str("src_sentence", src_sentence)
    check_vocab("src_vocab", src_vocab, ("<eos>", "<pad>"))
    if not src_sentence.split():
        raise ValueError(
            "src_sentence is empty: give a sentence to translate, e.g. 'go .'"
        )


@NEUTRAL.call("bleu")
def _bleu(pred_seq, label_seq, k):
    for name, seq in (("pred_seq", pred_seq), ("label_seq", label_seq)):
        _check_str(name, seq, "a str of space-separated tokens")
    check_int("k", k, minimum=1)


@NEUTRAL.call("translate_corpus")
def _translate_corpus(translate, text, num_examples=None):
    _check_translate(translate)
    _check_str("text", text, "a str, a corpus as read_data_nmt returns it")
    if num_examples is not None:
        check_int("num_examples", num_examples, minimum=1)


@NEUTRAL.call("evaluate_translations")
def _evaluate_translations(translate, tgt_vocab, name="bleu"):
    _check_translate(translate)
    check_vocab("tgt_vocab", tgt_vocab, ("<unk>",))
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"name must be a str that can start a record's name, such as 'bleu'; got {name!r:.60}"
        )


@NEUTRAL.call("show_translations")
def _show_translations(translate, sources, references, name="test_sentences"):
    _check_translate(translate)
    for arg, seq in (("sources", sources), ("references", references)):
        if not isinstance(seq, list | tuple) or not all(isinstance(s, str) for s in seq):
            raise TypeError(f"{arg} must be a list of sentences (str); got {seq!r:.60}")
    if len(sources) != len(references) or not sources:
        raise ValueError(
            "sources and references must hold the same number of sentences, at least one; got "
            f"{len(sources)} sources and {len(references)} references"
        )
    _check_record_name(name)


@NEUTRAL.call("evaluate_held_out")
def _evaluate_held_out(translate, tgt_vocab, name):
    _check_translate(translate)
    check_vocab("tgt_vocab", tgt_vocab, ("<unk>",))
    _check_record_name(name)


def _check_record_name(name):
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(
            f"name must be a str that can name a record, such as 'zero_start'; got {name!r:.60}"
        )


@NEUTRAL.call("evaluate_reversal")
def _evaluate_reversal(translate, num_examples=100, seed=1):
    if not callable(translate):
        raise TypeError(
            "translate must be a callable from a source string to (output string, attention), e.g. "
            "lambda s: d2l.predict_seq2seq(net, s, ..., save_attention_weights=True); "
            f"got {type(translate).__name__} {translate!r:.60}"
        )
    check_int("num_examples", num_examples, minimum=1)
    check_int("seed", seed, minimum=0)


def _check_translate(translate):
    if not callable(translate):
        raise TypeError(
            "translate must be a callable from an English sentence (a str) to its French "
            "translation (a str), e.g. lambda s: d2l.predict_seq2seq(net, s, ...)[0]; "
            f"got {type(translate).__name__} {translate!r:.60}"
        )


@NEUTRAL.call("corpus_scores")
def _corpus_scores(predictions, references):
    for name, seq in (("predictions", predictions), ("references", references)):
        if not isinstance(seq, list | tuple):
            raise TypeError(
                f"{name} must be a list, one entry per sentence; got {type(seq).__name__}"
            )
    if not predictions:
        raise ValueError("predictions must hold at least one sentence; got an empty list")
    if len(references) != len(predictions):
        raise ValueError(
            f"references must hold one list of references per prediction ({len(predictions)}); "
            f"got {len(references)}"
        )
    for i, prediction in enumerate(predictions):
        _check_str(f"predictions[{i}]", prediction, "a str of space-separated tokens")
    for i, refs in enumerate(references):
        if not isinstance(refs, list | tuple):
            raise TypeError(
                f"references[{i}] must be a list of reference strings (with one reference per "
                f"sentence: [[ref] for ref in refs]); got {type(refs).__name__}"
            )
        if not refs:
            raise ValueError(
                f"references[{i}] must hold at least one reference; got none"
            )
        for j, ref in enumerate(refs):
            _check_str(f"references[{i}][{j}]", ref, "a str of space-separated tokens")


@NEUTRAL.call("show_heatmaps")
def _show_heatmaps(
    matrices, xlabel, ylabel, titles=None, figsize=(2.5, 2.5), cmap="Reds"
):
    check_shapes(matrices=(matrices, "num_rows num_cols num_queries num_keys"))
    num_cols = matrices.shape[1]
    if titles is not None and len(titles) != num_cols:
        raise ValueError(
            f"titles must name each of the {num_cols} columns; got {len(titles)}"
        )


def _check_points(x, y):
    """The training inputs ``x`` and labels ``y`` of a regression: 1-D, of finite numbers, one
    label per input, at least 2 points (leaving one out must leave one)."""
    for name, value in (("x", x), ("y", y)):
        try:
            array = numpy.asarray(value, dtype=numpy.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be a 1-D array of numbers; got {type(value).__name__} {value!r:.60}"
            ) from None
        if array.ndim != 1 or len(array) < 2:
            raise ValueError(
                f"{name} must be a 1-D array of at least 2 numbers; got shape {array.shape}"
            )
        if not numpy.isfinite(array).all():
            raise ValueError(
                f"{name} must hold finite numbers; got {array[~numpy.isfinite(array)][:3]}"
            )
    if len(x) != len(y):
        raise ValueError(f"y must hold one label per input of x ({len(x)}); got {len(y)}")


@NEUTRAL.call("loo_loss")
def _loo_loss(x, y, w):
    _check_points(x, y)
    check_real("w", w)


@NEUTRAL.call("show_loo_minimum")
def _show_loo_minimum(x, y, lr):
    _check_points(x, y)
    check_real("lr", lr, minimum=0)
