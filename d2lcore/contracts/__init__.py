"""The contract of every taught class and function, once for the three frameworks (see :mod:`d2lcore.contracts.engine`).

Each contract is named like what it guards: ``@d2l.checked`` above ``class AdditiveAttention`` attaches
``AdditiveAttention`` below. A contract names the parameters of the real signature (``tests/test_contracts.py``
holds every contract to the signatures of all three frameworks): a shape such as ``"batch n_q d_q"`` names its
dimensions, and a name has one size in a whole call. Rules that only the model can state (the heads divide the
width) are written in the model too; here they come with the argument that breaks them.
"""

import numpy

from d2lcore.contracts.engine import (
    ANY,
    DROPOUT,
    Bool,
    Call,
    Contract,
    Fields,
    Floats,
    Function,
    Ids,
    Int,
    Is,
    Lengths,
    ListOf,
    Maybe,
    Real,
    Rule,
    Spec,
    Tensor,
    Text,
    VocabWith,
    check_token_ids,
)
from d2lcore.convert import to_numpy
from d2lcore.frameworks import FRAMEWORKS

# --- shared by several contracts ----------------------------------------------------------------------------------

_TOKENS = Ids("batch steps")
_HIDDEN = Floats("batch steps num_hiddens")
_VALID_LENS = Maybe(Lengths("batch", "batch n_q"))
_STEP_LENS = Maybe(Lengths("batch", "batch steps"))
_ENC_LENS = Maybe(Lengths("batch"))
_ENC_OUTPUTS = Floats("batch src_steps num_hiddens")
_CACHE = Floats("batch past num_hiddens")
_SRC_VOCAB = VocabWith("<eos>", "<pad>")
_TRAINING = dict(lr=Real(minimum=0), num_epochs=Int(1))


def _heads_divide(call):
    """num_heads divides num_hiddens (an argument, or X's last dimension): each head gets num_hiddens / num_heads
    features."""
    heads = call.arguments.get("num_heads")
    hiddens = call.arguments.get("num_hiddens", call.dims.get("num_hiddens"))
    of_x = "" if "num_hiddens" in call.arguments else ", X's last dimension"
    if None not in (hiddens, heads) and hiddens % heads:
        raise ValueError(
            f"num_hiddens ({hiddens}{of_x}) must be divisible by num_heads ({heads}), as each head gets "
            f"num_hiddens / num_heads features; got a remainder of {hiddens % heads}"
        )


def _at_least_one_step(call):
    steps = call.dims.get("steps")
    if steps is not None and steps < 1:
        raise ValueError(
            f"X must have at least one time step, shape (batch, steps >= 1); got {steps} steps"
        )


def _positions_fit(call, offset=None):
    """The steps of X at positions offset (the argument's, if not given), ..., offset + steps - 1 fit in the
    positional table of max_len positions."""
    offset = call.arguments.get("offset", 0) if offset is None else offset
    steps, max_len = call.dims.get("steps"), call.dims["max_len"]
    if steps is None:  # unknown until a traced graph runs: the framework checks it there
        call.graph_checks += call.fw.assert_positions(call.arguments["X"], offset, max_len)
    elif offset + steps > max_len:
        raise ValueError(
            f"positions {offset} ... {offset + steps - 1} do not fit in the table of max_len = {max_len} positions "
            f"(got X with {steps} steps at offset {offset}): raise max_len"
        )


# An RNN encoder's outputs; the states of the RNN decoder and of the RNN attention decoder
_ENCODER_OUTPUTS = Fields(outputs=Floats("batch src_steps h"), state=ANY)
_CONTEXT_STATE = Fields(
    context=Floats("batch num_hiddens"), hidden=Floats("num_layers batch num_hiddens")
)
_ATTENTION_STATE = Fields(
    enc_outputs=Floats("batch src_steps h"), hidden=ANY, enc_valid_lens=_ENC_LENS
)


def _vocab_size(part, fw):
    """The number of token indices that ``part`` of a model (its encoder, its decoder) embeds, if it embeds any."""
    embedding = getattr(part, "embedding", None)
    return None if embedding is None else fw.rows(embedding)


def _embedding_dims(layer, fw):
    return {"vocab": fw.rows(layer.embedding)}


def _rnn_dims(layer, fw):
    num_layers, num_hiddens = fw.gru_size(layer.rnn)
    return {"num_layers": num_layers, "num_hiddens": num_hiddens, **_embedding_dims(layer, fw)}


def _table_dims(layer, fw):
    _, max_len, num_hiddens = layer.P.shape  # the table: (1, max_len, num_hiddens)
    return {"max_len": int(max_len), "num_hiddens": int(num_hiddens)}


# --- Attention Pooling: Nadaraya–Watson kernel regression ------------------------------------------------------------

_KERNEL_INPUTS = dict(queries=Floats("n"), keys=Floats("n m"), values=Floats("n m"))

NWKernelRegression = Contract(call=_KERNEL_INPUTS)


def _training_points(call):
    if call.dims.get("n") == 0:  # a loss of 0 and no update, silently
        raise ValueError(
            "queries and targets must hold at least one training point, shape (n >= 1,); got n = 0"
        )


train_nw = Contract(
    call=dict(net=ANY, **_KERNEL_INPUTS, targets=Floats("n"), **_TRAINING),
    rules=(_training_points,),
)


def _points(call, name, value):
    """A regression's inputs or labels: 1-D, at least 2 finite numbers (leaving one out must leave one)."""
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


def _one_label_per_input(call):
    x, y = call.arguments["x"], call.arguments["y"]
    if len(x) != len(y):
        raise ValueError(f"y must hold one label per input of x ({len(x)}); got {len(y)}")


loo_loss = Contract(
    call=dict(x=Rule(_points), y=Rule(_points), w=Real()), rules=(_one_label_per_input,)
)
show_loo_minimum = Contract(
    call=dict(x=Rule(_points), y=Rule(_points), lr=Real(minimum=0)), rules=(_one_label_per_input,)
)

# --- Attention Scoring Functions --------------------------------------------------------------------------------------

_QKV = dict(
    queries=Floats("batch n_q d_q"), keys=Floats("batch n_k d_k"), values=Floats("batch n_k d_v")
)

masked_softmax = Contract(call=dict(X=Floats("batch n_q n_k"), valid_lens=_VALID_LENS))
AdditiveAttention = Contract(
    init=dict(num_hiddens=Int(1), dropout=DROPOUT),
    call=dict(_QKV, valid_lens=_VALID_LENS),
    built=("queries", "keys"),
)
DotProductAttention = Contract(
    init=dict(dropout=DROPOUT),
    call=dict(
        _QKV, queries=Floats("batch n_q d"), keys=Floats("batch n_k d"), valid_lens=_VALID_LENS
    ),
)


def _matrices(call, name, value):
    shape = numpy.shape(to_numpy(value))
    if len(shape) != 4:
        raise ValueError(
            f"{name} must have shape (num_rows, num_cols, num_queries, num_keys); got shape {shape}"
        )
    titles = call.arguments.get("titles")
    if titles is not None and len(titles) != shape[1]:
        raise ValueError(f"titles must name each of the {shape[1]} columns; got {len(titles)}")


show_heatmaps = Contract(
    call=dict(matrices=Rule(_matrices), xlabel=ANY, ylabel=ANY, titles=ANY, figsize=ANY, cmap=ANY)
)

# --- Multi-Head Attention ---------------------------------------------------------------------------------------------


def _rows_of_heads(call):
    rows, heads = call.dims.get("batch_heads"), call.arguments["num_heads"]
    if rows is not None and rows % heads:
        raise ValueError(
            f"X's first dimension ({rows}) must be a multiple of num_heads ({heads}): it holds batch * num_heads "
            "rows; got X of that shape"
        )


transpose_qkv = Contract(
    call=dict(X=Tensor("batch n num_hiddens"), num_heads=Int(1)), rules=(_heads_divide,)
)
transpose_output = Contract(
    call=dict(X=Tensor("batch_heads n d"), num_heads=Int(1)), rules=(_rows_of_heads,)
)
MultiHeadAttention = Contract(
    init=dict(num_hiddens=Int(1), num_heads=Int(1), dropout=DROPOUT, bias=Bool()),
    call=AdditiveAttention.call,
    built=("queries", "keys", "values"),
    init_rules=(_heads_divide,),
)


def _neighbour_weights(call, name, value):
    shape = numpy.shape(to_numpy(value))
    if len(shape) != 4 or shape[2] != shape[3] or 0 in shape:
        raise ValueError(
            f"{name} must have shape (batch, num_heads, n, n), self-attention over n positions, none of them 0; "
            f"got {shape}"
        )


show_neighbour_heads = Contract(call=dict(weights=Rule(_neighbour_weights)))
neighbour_arrays = Contract(
    call=dict(num_examples=Int(1), num_steps=Int(3), num_symbols=Int(1), seed=Int(0))
)

# --- Self-Attention and Positional Encoding ---------------------------------------------------------------------------

PositionalEncoding = Contract(
    init=dict(num_hiddens=Int(1), dropout=DROPOUT, max_len=Int(1)),
    call=dict(X=_HIDDEN, offset=Int(0)),
    dims=_table_dims,
    rules=(_positions_fit,),
)

# --- Sequence-to-Sequence Toolkit: text, vocabularies, data -----------------------------------------------------------

preprocess_nmt = Contract(call=dict(text=Text()))
tokenize_nmt = Contract(call=dict(text=Text(), num_examples=Maybe(Int(1))))


def _tokens(call, name, value):
    """A list of str tokens, or a list of lists of them (read twice: a generator would be used up)."""
    if not isinstance(value, list | tuple):
        hint = (
            "split the text into tokens first" if isinstance(value, str) else "make it a list first"
        )
        raise TypeError(
            f"{name} must be a list of tokens or a list of token lists; got {type(value).__name__}: {hint}"
        )
    for item in value:
        for token in item if isinstance(item, list | tuple) else [item]:
            if not isinstance(token, str):
                raise TypeError(f"{name} must be str; got {type(token).__name__} {token!r}")


def _reserved(call, name, value):
    reserved = list(value) if isinstance(value, list | tuple) else None
    if reserved is None or not all(isinstance(t, str) for t in reserved):
        raise TypeError(
            f"{name} must be a list of str, e.g. ['<pad>', '<bos>', '<eos>']; got {value!r}"
        )
    if "<unk>" in reserved:
        raise ValueError(f"{name} must leave out '<unk>', which is always index 0; got {reserved}")
    repeated = sorted({t for t in reserved if reserved.count(t) > 1})
    if repeated:
        raise ValueError(f"{name} must not repeat a token; got duplicates {repeated}")


Vocab = Contract(
    init=dict(tokens=Maybe(Rule(_tokens)), min_freq=Int(0), reserved_tokens=Maybe(Rule(_reserved)))
)


def _line(call, name, value):
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        hint = ": split it into tokens first" if isinstance(value, str) else ""
        raise TypeError(
            f"{name} must be a list of tokens or indices; got {type(value).__name__} {value!r:.40}{hint}"
        )


truncate_pad = Contract(call=dict(line=Rule(_line), num_steps=Int(1), padding_token=ANY))


_LINES = ListOf(Is("a list of tokens", lambda line: isinstance(line, list | tuple)), "token lists")
build_array_nmt = Contract(call=dict(lines=_LINES, vocab=_SRC_VOCAB, num_steps=Int(1)))
nmt_arrays = Contract(call=dict(num_steps=Int(1), num_examples=Int(1)))


def _sentence(call, name, value):
    Text().check(call, name, value)
    if not value.split():
        raise ValueError(f"{name} must hold a sentence to translate, e.g. 'go .'; got an empty one")


_SOURCE = dict(src_sentence=Rule(_sentence), src_vocab=_SRC_VOCAB, num_steps=Int(1))
encode_source = Contract(call=_SOURCE)

# --- Sequence-to-Sequence Toolkit: the encoder–decoder, the masked loss --------------------------------------------

_RNN_SIZES = dict(
    vocab_size=Int(1), embed_size=Int(1), num_hiddens=Int(1), num_layers=Int(1), dropout=DROPOUT
)
_RNN_DECODER = dict(
    init=_RNN_SIZES,
    methods=dict(init_state=dict(enc_outputs=_ENCODER_OUTPUTS, enc_valid_lens=_ENC_LENS)),
    rules=(_at_least_one_step,),
)

Seq2SeqEncoder = Contract(
    init=_RNN_SIZES, call=dict(X=_TOKENS), dims=_embedding_dims, rules=(_at_least_one_step,)
)
Seq2SeqDecoder = Contract(
    call=dict(X=_TOKENS, state=_CONTEXT_STATE), dims=_rnn_dims, **_RNN_DECODER
)
Seq2SeqAttentionDecoder = Contract(
    call=dict(X=_TOKENS, state=_ATTENTION_STATE), dims=_embedding_dims, **_RNN_DECODER
)
GRU = Contract(  # TensorFlow's, which the toolkit page builds from GRU cells
    init=dict(num_hiddens=Int(1), num_layers=Int(1), dropout=DROPOUT),
    call=dict(X=Floats("batch steps inputs"), state=Maybe(Floats("num_layers batch num_hiddens"))),
    dims=lambda gru, fw: dict(zip(("num_layers", "num_hiddens"), fw.gru_size(gru), strict=True)),
    built=("X",),
)
sequence_mask = Contract(
    call=dict(X=Tensor("batch steps ..."), valid_len=Lengths("batch"), value=Real(finite=False))
)
MaskedSoftmaxCELoss = Contract(
    call=dict(pred=Floats("batch steps vocab"), label=_TOKENS, valid_len=Lengths("batch"))
)
LabelSmoothedCELoss = Contract(  # Label Smoothing and Weight Tying
    init=dict(smoothing=Real(minimum=0, below=1)), call=MaskedSoftmaxCELoss.call
)

# --- training and translation ---------------------------------------------------------------------------------------


class Batches(Spec):
    """``data_iter`` of a training loop: an iterable of batches (X, X_valid_len, Y, Y_valid_len) of shapes (batch,
    steps), (batch,), (batch, tgt_steps), (batch,), as load_data_nmt gives. The batches are known only as the loop
    reads them, so the check passes on, instead of ``data_iter``, an iterable of the same batches that checks each
    as it is read (token indices of net's encoder and decoder, lengths; then target tokens in every epoch). It is
    the only check that passes on another object than it was given; what the loop reads is the same."""

    def check(self, call, name, value):
        if not hasattr(value, "__iter__"):
            raise TypeError(
                f"{name} must be an iterable of batches, as load_data_nmt gives; got {value!r:.60}"
            )
        return _CheckedBatches(value, call)


_BATCH = Fields(
    ", as load_data_nmt gives",
    X=Ids("batch steps", vocab="X_vocab"),
    X_valid_len=Lengths("batch"),
    Y=Ids("batch tgt_steps", vocab="Y_vocab"),
    Y_valid_len=Lengths("batch"),
)


class _CheckedBatches:
    def __init__(self, data_iter, call):
        self.data_iter, self.fw, self.epoch = data_iter, call.fw, 0
        net = call.arguments["net"]
        self.vocab = {
            "X_vocab": _vocab_size(net.encoder, self.fw),
            "Y_vocab": _vocab_size(net.decoder, self.fw),
        }

    def __iter__(self):
        tokens = 0
        for batch in self.data_iter:
            try:  # the batch's tensors, then its number of target tokens
                _BATCH.check(
                    Call("train_seq2seq", {}, None, self.fw, self.vocab),
                    "batch of data_iter",
                    batch,
                )
            except (TypeError, ValueError) as error:
                raise type(error)(f"train_seq2seq: each {error}") from None
            tokens += int(self.fw.values(batch[3]).sum())
            yield batch
        if tokens == 0:  # a loss of 0 / 0
            raise ValueError(
                f"train_seq2seq: data_iter must give target tokens in every epoch; got none in epoch "
                f"{self.epoch + 1}: it is empty, used up (a generator can be read only once: use load_array), or "
                "every Y_valid_len is 0"
            )
        self.epoch += 1


_LOSS_FN = Function(
    "a masked loss, called as loss_fn(pred, label, valid_len) -> (batch,) sums per sequence, e.g. "
    "d2l.LabelSmoothedCELoss(0.1)"
)


_SCHEDULE = Function(
    "None or a learning-rate schedule called with the update's number, such as "
    "WarmupSchedule(num_hiddens, warmup_steps)"
)


train_seq2seq = Contract(
    call=dict(
        net=ANY,
        data_iter=Batches(),
        **_TRAINING,
        tgt_vocab=VocabWith("<bos>"),
        device=ANY,
        loss_fn=Maybe(_LOSS_FN),
        schedule=Maybe(_SCHEDULE),
    )
)


def _translation_fits(call):
    """The encoded source and <bos> are token indices of net's encoder and decoder (whose own checks do not run
    inside predict_seq2seq), num_steps positions fit their positional tables, and attention weights to save exist."""
    from d2lcore.text import encode_source

    net, args = call.arguments["net"], call.arguments
    src, _ = encode_source.__wrapped__(args["src_sentence"], args["src_vocab"], args["num_steps"])
    bos = [args["tgt_vocab"]["<bos>"]]
    for name, ids, part in (
        ("src_sentence", src, net.encoder),
        ("tgt_vocab['<bos>']", bos, net.decoder),
    ):
        check_token_ids(name, numpy.array(ids), _vocab_size(part, call.fw))
        encoding = getattr(part, "pos_encoding", None)
        if encoding is not None and args["num_steps"] > encoding.P.shape[1]:
            raise ValueError(
                f"num_steps must be at most the max_len = {encoding.P.shape[1]} positions of the model's positional "
                f"encoding; got num_steps={args['num_steps']}"
            )
    if args.get("save_attention_weights") and not hasattr(type(net.decoder), "attention_weights"):
        raise ValueError(
            "save_attention_weights=True needs a decoder with attention weights (an AttentionDecoder); got "
            f"{type(net.decoder).__name__}, which has none"
        )


predict_seq2seq = Contract(
    call=dict(
        _SOURCE,
        net=ANY,
        tgt_vocab=VocabWith("<bos>", "<eos>"),
        device=ANY,
        save_attention_weights=Bool(),
    ),
    rules=(_translation_fits,),
)

# --- evaluation -----------------------------------------------------------------------------------------------------

_TRANSLATE = Function(
    "a callable from an English sentence (a str) to its French translation (a str), e.g. "
    "lambda s: d2l.predict_seq2seq(net, s, ...)[0]"
)
_TOKENS_TEXT = Text("a str of space-separated tokens")


_RECORD_NAME = Is(
    "a str that can name a record, such as 'bleu'",
    lambda value: isinstance(value, str) and value.isidentifier(),
)


bleu = Contract(call=dict(pred_seq=_TOKENS_TEXT, label_seq=_TOKENS_TEXT, k=Int(1)))
translate_corpus = Contract(
    call=dict(
        translate=_TRANSLATE,
        text=Text("a str, a corpus as read_data_nmt returns it"),
        num_examples=Maybe(Int(1)),
    )
)
evaluate_translations = Contract(
    call=dict(translate=_TRANSLATE, tgt_vocab=VocabWith("<unk>"), name=_RECORD_NAME)
)
evaluate_held_out = evaluate_translations


def _as_many_references(call):
    sources, references = call.arguments["sources"], call.arguments["references"]
    if len(sources) != len(references) or not sources:
        raise ValueError(
            "sources and references must hold the same number of sentences, at least one; got "
            f"{len(sources)} sources and {len(references)} references"
        )


show_translations = Contract(
    call=dict(
        translate=_TRANSLATE,
        sources=ListOf(Text(), "sentences (str)"),
        references=ListOf(Text(), "sentences (str)"),
        name=_RECORD_NAME,
    ),
    rules=(_as_many_references,),
)


def _one_list_per_prediction(call):
    predictions, references = call.arguments["predictions"], call.arguments["references"]
    if len(references) != len(predictions):
        raise ValueError(
            f"references must hold one list of references per prediction ({len(predictions)}); got "
            f"{len(references)}"
        )


_REFERENCES = ListOf(
    _TOKENS_TEXT,
    "reference strings (with one reference per sentence: [[ref] for ref in refs])",
    True,
)
corpus_scores = Contract(
    call=dict(
        predictions=ListOf(_TOKENS_TEXT, "predicted sentences", nonempty=True),
        references=ListOf(_REFERENCES, "lists of references, one per prediction"),
    ),
    rules=(_one_list_per_prediction,),
)

# --- Bahdanau Attention: the reversal task --------------------------------------------------------------------------


def _reversal(call):
    args = call.arguments
    symbols, steps = args.get("num_symbols", 8), args.get("num_steps")
    min_len, max_len = args.get("min_len", 5), args.get("max_len", 8)
    if symbols > 26:
        raise ValueError(f"num_symbols must be at most 26 (the lowercase letters); got {symbols}")
    if max_len < min_len:
        raise ValueError(f"max_len must be >= min_len = {min_len}; got max_len={max_len}")
    if steps is not None and steps < max_len + 1:
        raise ValueError(
            f"num_steps must be at least max_len + 1 = {max_len + 1}, so that every row keeps its <eos>; got "
            f"num_steps={steps}"
        )


_REVERSAL = dict(
    num_examples=Int(1), num_symbols=Int(1), min_len=Int(1), max_len=Int(), seed=Int(0)
)
_REVERSE = Function(
    "a callable from a source string to (output string, attention), e.g. "
    "lambda s: d2l.predict_seq2seq(net, s, ..., save_attention_weights=True)"
)

reversal_pairs = Contract(call=_REVERSAL, rules=(_reversal,))
reversal_arrays = Contract(call=dict(_REVERSAL, num_steps=Int(1)), rules=(_reversal,))
evaluate_reversal = Contract(call=dict(translate=_REVERSE, num_examples=Int(1), seed=Int(0)))

# --- The Transformer ------------------------------------------------------------------------------------------------

PositionWiseFFN = Contract(
    init=dict(ffn_num_hiddens=Int(1), ffn_num_outputs=Int(1)),
    call=dict(X=Floats("... d")),
    built=("X",),
)


def _same_shape(call):
    x, y = tuple(call.arguments["X"].shape), tuple(call.arguments["Y"].shape)
    if len(x) != len(y) or any(None not in (a, b) and a != b for a, b in zip(x, y)):
        raise ValueError(
            f"AddNorm adds X and Y, so Y must have the shape of X; got X {x} and Y {y}"
        )


def _norm_dims(layer, fw):
    width = fw.width(layer.ln)  # None before a lazy LayerNorm's first call
    return {} if width is None else {"num_hiddens": width}


AddNorm = Contract(
    init=dict(num_hiddens=Int(1), dropout=DROPOUT),
    call=dict(X=Floats("... num_hiddens"), Y=Floats("... num_hiddens")),
    dims=_norm_dims,
    built=("X",),
    rules=(_same_shape,),
)

_BLOCK_SIZES = dict(
    num_hiddens=Int(1), ffn_num_hiddens=Int(1), num_heads=Int(1), dropout=DROPOUT, use_bias=Bool()
)
_BLOCK = dict(
    init=_BLOCK_SIZES,
    init_rules=(_heads_divide,),
    dims=lambda block, fw: {"num_hiddens": fw.width(block.ffn.dense2)},
)

TransformerEncoderBlock = Contract(call=dict(X=_HIDDEN, valid_lens=_STEP_LENS), **_BLOCK)
TransformerDecoderBlock = Contract(
    call=dict(X=_HIDDEN, enc_outputs=_ENC_OUTPUTS, enc_valid_lens=_STEP_LENS, cache=Maybe(_CACHE)),
    **_BLOCK,
)
_TRANSFORMER_SIZES = dict(_BLOCK_SIZES, vocab_size=Int(1), num_layers=Int(1), max_len=Int(1))


def _coder_dims(coder, fw):
    return {**_embedding_dims(coder, fw), **_table_dims(coder.pos_encoding, fw)}


TransformerEncoder = Contract(
    init=_TRANSFORMER_SIZES,
    init_rules=(_heads_divide,),
    call=dict(X=_TOKENS, valid_lens=_STEP_LENS),
    dims=_coder_dims,
    rules=(_positions_fit,),
)

_HOW = (
    "build it with decoder.init_state(enc_outputs, enc_valid_lens) and pass on the state that each decoder call "
    "returns"
)


def _caches(call, name, value):
    """The decoder blocks' caches: num_layers entries, all None or all (batch, past, num_hiddens) with the same
    past, which goes in the call's dims."""
    if not isinstance(value, tuple | list) or len(value) != call.dims["num_layers"]:
        raise ValueError(
            f"{name} must be a tuple of num_layers = {call.dims['num_layers']} entries, one per decoder block; "
            f"got {value!r:.80}: {_HOW}"
        )
    if any(cache is None for cache in value) and not all(cache is None for cache in value):
        raise ValueError(
            f"{name} must be all None (nothing decoded yet) or all tensors; got a mix: {_HOW}"
        )
    for cache in value:
        Maybe(_CACHE).check(call, name, cache)
    # None: a length known only when a traced graph runs
    call.dims.setdefault("past", 0 if value[0] is None else None)


_TRANSFORMER_STATE = Fields(
    " (build it with decoder.init_state(enc_outputs, enc_valid_lens))",
    enc_outputs=_ENC_OUTPUTS,
    enc_valid_lens=_ENC_LENS,
    caches=Rule(_caches),
)


def _decoder_positions(call):
    past = call.dims["past"]
    if past is None:  # caches of a length known only when a traced graph runs
        caches = call.arguments["state"][2]
        X, max_len = call.arguments["X"], call.dims["max_len"]
        call.graph_checks += call.fw.assert_positions(X, caches[0], max_len)
    else:
        _positions_fit(call, past)


def _decoder_dims(decoder, fw):
    return {
        "num_layers": len(decoder.blks),
        "num_hiddens": decoder.num_hiddens,
        **_coder_dims(decoder, fw),
    }


TransformerDecoder = Contract(
    init=_TRANSFORMER_SIZES,
    init_rules=(_heads_divide,),
    call=dict(X=_TOKENS, state=_TRANSFORMER_STATE),
    methods=dict(init_state=dict(enc_outputs=_ENC_OUTPUTS, enc_valid_lens=_ENC_LENS)),
    dims=_decoder_dims,
    rules=(_decoder_positions,),
)

# --- Label Smoothing and Weight Tying -------------------------------------------------------------------------------

# LabelSmoothedCELoss: beside MaskedSoftmaxCELoss, whose call it takes
TiedTransformerDecoder = TransformerDecoder  # the same arguments, with one matrix for two uses


_FRAMEWORK = Is(f"one of {list(FRAMEWORKS)}", lambda value: value in FRAMEWORKS)
show_smoothing_study = Contract(call=dict(framework=_FRAMEWORK, path=ANY))


# --- Decoding: Greedy and Beam Search ------------------------------------------------------------------------------


def _beams_fit(call):
    """The decoder's state is batch-first (beam_search reorders its axis 0), and every sentence is a
    translation that predict_seq2seq's checks accept."""
    decoder = call.arguments["net"].decoder
    if not any(cls.__name__ == "TransformerDecoder" for cls in type(decoder).__mro__):
        raise ValueError(
            "net.decoder must be a TransformerDecoder, whose state beam_search reorders along its first axis "
            f"(the batch); got {type(decoder).__name__}, whose state is not batch-first"
        )
    for sentence in call.arguments["src_sentences"]:
        one = Call(
            call.name, {**call.arguments, "src_sentence": sentence}, call.obj, call.fw, call.dims
        )
        _translation_fits(one)


beam_search = Contract(
    call=dict(
        net=ANY,
        src_sentences=ListOf(Rule(_sentence), "sentences (str) to translate, e.g. ['go .']", True),
        src_vocab=_SRC_VOCAB,
        tgt_vocab=VocabWith("<bos>", "<eos>"),
        num_steps=Int(1),
        device=ANY,
        beam_size=Int(1),
        alpha=Real(minimum=0),
        all_beams=Bool(),
    ),
    rules=(_beams_fit,),
)

# --- Grouped-Query and Memory-Efficient Attention ---------------------------------------------------------------------


def _kv_heads_divide(call):
    """num_kv_heads divides num_heads: each key-value head serves num_heads / num_kv_heads query heads."""
    heads, kv_heads = call.arguments.get("num_heads"), call.arguments.get("num_kv_heads")
    if None not in (heads, kv_heads) and heads % kv_heads:
        raise ValueError(
            f"num_kv_heads ({kv_heads}) must divide num_heads ({heads}), as each key-value head serves "
            f"num_heads / num_kv_heads query heads; got a remainder of {heads % kv_heads}"
        )


GroupedQueryAttention = Contract(
    init=dict(
        num_hiddens=Int(1), num_heads=Int(1), num_kv_heads=Int(1), dropout=DROPOUT, bias=Bool()
    ),
    call=AdditiveAttention.call,
    built=("queries", "keys", "values"),
    init_rules=(_heads_divide, _kv_heads_divide),
)
tiled_attention = Contract(call=dict(DotProductAttention.call, causal=Bool(), tile_size=Int(1)))

# --- Training a Transformer Well; Where the Layer Norm Goes ---------------------------------------------------------

WarmupSchedule = Contract(init=dict(num_hiddens=Int(1), warmup_steps=Int(1)))
# The post-norm classes' arguments, layers in another order
PreNormEncoderBlock, PreNormDecoderBlock = TransformerEncoderBlock, TransformerDecoderBlock
PreNormTransformerEncoder, PreNormTransformerDecoder = TransformerEncoder, TransformerDecoder

# --- Decoder-Only Models, the Key–Value Cache and Rotary Embeddings --------------------------------------------------


def _even_features(call):
    """rotary_embedding rotates pairs of adjacent features: X's last dimension is even."""
    d = call.dims.get("d")
    if d is not None and d % 2:
        raise ValueError(
            f"X's last dimension must be even, as rotary_embedding rotates pairs of adjacent features "
            f"(2i, 2i + 1); got d = {d}"
        )


rotary_embedding = Contract(
    call=dict(X=Floats("... steps d"), offset=Int(0), base=Real(minimum=1)), rules=(_even_features,)
)

_KV = Floats("batch num_heads past head_size")
_KV_CACHE = Fields(keys=_KV, values=_KV)  # one attention's cache


def _attention_heads(attention):
    return {
        "num_heads": attention.num_heads,
        "head_size": attention.num_hiddens // attention.num_heads,
    }


_PREFIX_LENS = Maybe(Lengths("batch"))

CausalSelfAttention = Contract(
    init=dict(num_hiddens=Int(1), num_heads=Int(1), dropout=DROPOUT, bias=Bool(), rotary=Bool()),
    init_rules=(_heads_divide,),
    call=dict(X=_HIDDEN, prefix_lens=_PREFIX_LENS, cache=Maybe(_KV_CACHE)),
    dims=lambda layer, fw: _attention_heads(layer),
    built=("X",),
)
DecoderOnlyBlock = Contract(
    init=dict(_BLOCK_SIZES, rotary=Bool()),
    init_rules=(_heads_divide,),
    call=CausalSelfAttention.call,
    dims=lambda block, fw: {
        "num_hiddens": block.attention.num_hiddens,
        **_attention_heads(block.attention),
    },
)


_LM_CACHES = ListOf(_KV_CACHE, "(keys, values) pairs, one per block")


def _cache_fits(call):
    """caches holds one (keys, values) pair per block, and the cached positions and the new ones fit in max_len
    positions."""
    caches, layers = call.arguments.get("caches"), call.dims["num_layers"]
    if caches is not None and len(caches) != layers:
        raise ValueError(
            f"caches must be None or hold num_layers = {layers} (keys, values) pairs, one per block, as the "
            f"model's previous call returned; got {len(caches)}"
        )
    past, steps = 0 if caches is None else call.dims.get("past"), call.dims.get("steps")
    max_len = call.dims["max_len"]
    if None not in (past, steps) and past + steps > max_len:
        raise ValueError(
            f"caches must leave room for X within the model's max_len = {max_len} positions; got a cache of "
            f"{past} positions and X of {steps} steps, {past + steps} positions: start again with a shorter "
            "sequence, or raise max_len"
        )


PrefixLM = Contract(
    init=dict(_TRANSFORMER_SIZES, rotary=Bool()),
    init_rules=(_heads_divide,),
    call=dict(X=_TOKENS, prefix_lens=_PREFIX_LENS, caches=Maybe(_LM_CACHES)),
    dims=lambda lm, fw: {
        **_embedding_dims(lm, fw),
        "num_layers": lm.num_layers,
        "max_len": lm.max_len,
        **_attention_heads(lm.blks[0].attention),
    },
    rules=(_at_least_one_step, _cache_fits),
)


def _prompt_fits(call):
    """net is a PrefixLM; every row of prompt holds the separator; the prompt and the generated tokens fit."""
    net, prompt = call.arguments["net"], call.arguments["prompt"]
    if not any(cls.__name__ == "PrefixLM" for cls in type(net).__mro__):
        raise ValueError(
            f"net must be a PrefixLM, which takes prefix lengths and caches; got {type(net).__name__}"
        )
    ids = call.fw.values(prompt)
    if ids is None:
        return
    embedding = getattr(net, "embedding", None)
    check_token_ids("prompt", ids, None if embedding is None else call.fw.rows(embedding))
    separator = call.arguments["separator"]
    missing = [row for row in range(ids.shape[0]) if not (ids[row] == separator).any()]
    if missing:
        raise ValueError(
            f"prompt must hold the separator (token {separator}) in every row, where the prefix ends; got "
            f"rows {missing[:5]} without it: a prefix language model's prompt is the source, then the separator"
        )
    total = ids.shape[1] + call.arguments["num_steps"] - 1  # the last token is not fed back
    if total > net.max_len:
        raise ValueError(
            f"num_steps must keep the positions within net.max_len = {net.max_len}; got {call.arguments['num_steps']} "
            f"steps after a prompt of {ids.shape[1]} tokens, which need {total} positions"
        )


generate = Contract(
    call=dict(net=ANY, prompt=Ids("batch n"), num_steps=Int(1), separator=Int(0), use_cache=Bool()),
    rules=(_prompt_fits,),
)
