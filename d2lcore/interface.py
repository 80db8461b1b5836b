"""The public interface of ``d2lcore``: its names, by section; their signatures are written once, in their code.

``d2lcore.mxnet``, ``d2lcore.torch`` and ``d2lcore.tensorflow`` each provide exactly the names of
:data:`SECTIONS`, with the same signatures and the same semantics: ``tests/test_interface.py`` compares the three
modules with each other (the one documented difference: PyTorch's ``AddNorm`` also takes ``num_hiddens``, for
which ``nn.LayerNorm`` is built). A name that is one framework-neutral object (plotting, records, text, BLEU)
is defined once, in ``d2lcore/*.py``, and every module re-exports it; a name of a framework is defined once in
each ``d2lcore/<framework>/``. This module lists names only, never a signature: the API pages
(``chapters/api.md`` and its parts, each naming its sections) show each name's signature and docstring as its
PyTorch code has them.

**Layers.** For a layer, ``forward`` stands for the computation that calling the layer runs: ``forward`` in MXNet
and PyTorch, ``call`` in Keras. A layer's forward pass runs in evaluation mode unless the framework's training
mode is on: MXNet inside ``autograd.record()``, PyTorch after ``net.train()``, Keras when ``training=True`` is
passed to the outermost layer (Keras hands it on to the layers inside). Input sizes are inferred on the first
call. The Transformer's blocks are post-norm, as in Vaswani et al. (2017), and every ``AddNorm`` normalises the last
axis with epsilon ``LAYER_NORM_EPS`` = 1e-5.

**Bad inputs.** Every callable checks its arguments and raises ``TypeError`` (wrong type or dtype: an integer
tensor where floats are needed, floats where token indices are needed, a boolean mask where lengths are needed)
or ``ValueError`` (wrong rank, shape, size or range), with a message that names the argument, says what was
expected and what was given, e.g. ``X must hold token indices 0 ... 9 (vocab_size = 10); got 1 out of range, e.g.
[12]``. The errors come from d2lcore's contracts, never from inside a framework; the only other kinds are
``NotImplementedError`` from the base classes ``Encoder``, ``Decoder`` and ``AttentionDecoder``, and the download
errors of ``d2lcore.datasets``. In particular:

- token indices (``X`` of the encoders and decoders, ``label`` of ``MaskedSoftmaxCELoss``) must be integers in
  0 ... vocab_size - 1: a model built for a smaller vocabulary than its data is refused, not clamped or wrapped;
- lengths (``valid_lens``, ``valid_len``, ``enc_valid_lens``) must be whole numbers >= 0 (integers, or floats
  that are whole numbers), not booleans; a length above the number of steps means "all of them";
- sizes (``vocab_size``, ``num_hiddens``, ``num_layers``, ...) are ints >= 1; ``dropout`` a number in [0, 1);
  ``lr`` a finite number >= 0; ``num_epochs`` an int >= 1;
- a layer whose input sizes are inferred on its first call refuses a later input of another size;
- ``train_seq2seq`` refuses a ``data_iter`` that gives no target tokens in an epoch (empty, used up, or every
  length 0), and the vocabularies must hold the reserved tokens that training and translation use.

The checks of a taught class or function live outside its code, as its contract in ``d2lcore/contracts/__init__.py``
(one for the three frameworks, named like what it guards), which the engine ``d2lcore/contracts/engine.py`` runs and the
decorator ``@d2l.checked`` attaches; what the engine needs to know of a framework's tensors comes from the hooks
in ``d2lcore/<framework>/tensors.py``. The checks run once per outermost call, not again in the layers it calls.
They cost one small reduction per call where a tensor's values are checked (token indices, lengths), none where
only shapes and dtypes are. Inside a traced TensorFlow graph (``tf.function``) values are not checked;
``train_seq2seq`` checks each batch of ``data_iter`` as it reads it, before the compiled step.

**Valid edge cases.** NaN in, NaN out: a NaN score or logit that is used gives NaN (in ``masked_softmax`` the
NaN key's weight; PyTorch and TensorFlow make the whole row NaN, MXNet's softmax only that key). A masked score is
ignored whatever it holds (NaN, inf or -inf): the masking replaces it, so a masked key never influences the
output of ``masked_softmax`` or of the attention layers. A length of 0 gives a row of zero weights
(``masked_softmax``) or a loss of 0 (``MaskedSoftmaxCELoss``). An empty batch (batch 0) gives an empty result
in ``masked_softmax`` and ``sequence_mask``. Sequences must have at least one step in the encoders and decoders.
``tests/test_bad_inputs.py`` generates both kinds of cases for every callable, in every framework.
"""

SECTIONS = {
    "Plotting, timing, records and checks": (
        "show_heatmaps",
        "plot",
        "set_axes",
        "set_figsize",
        "use_svg_display",
        "plt",
        "Animator",
        "Timer",
        "checked",
        "show_record",
        "show_training",
        "show_bottleneck",
        "LAYER_NORM_EPS",
        "to_numpy",
        "last_query",
    ),
    "Random seeds and devices": ("set_seed", "num_gpus", "cpu", "try_gpu"),
    "Attention Pooling: Nadaraya–Watson Kernel Regression": (
        "NWKernelRegression",
        "train_nw",
        "loo_loss",
        "show_loo_minimum",
    ),
    "Attention Scoring Functions": (
        "masked_softmax",
        "AdditiveAttention",
        "DotProductAttention",
    ),
    "Multi-Head Attention": ("transpose_qkv", "transpose_output", "MultiHeadAttention"),
    "Self-Attention and Positional Encoding": ("PositionalEncoding",),
    "The same weights in every framework": ("export_weights", "load_weights"),
    "The English–French data, tokens and vocabularies (Sequence-to-Sequence Toolkit)": (
        "read_data_nmt",
        "preprocess_nmt",
        "tokenize_nmt",
        "Vocab",
        "truncate_pad",
        "build_array_nmt",
        "reversal_pairs",
        "reversal_arrays",
        "evaluate_reversal",
        "neighbour_arrays",
        "show_neighbour_heads",
        "download",
        "download_extract",
        "bleu",
        "corpus_scores",
        "Translation",
        "translate_corpus",
        "evaluate_translations",
        "evaluate_held_out",
        "show_translations",
    ),
    "Data iterators (Sequence-to-Sequence Toolkit)": ("load_array", "load_data_nmt"),
    "Encoder–decoder models (Sequence-to-Sequence Toolkit, Bahdanau Attention)": (
        "Encoder",
        "Decoder",
        "AttentionDecoder",
        "not_implemented",
        "EncoderDecoder",
        "Seq2SeqEncoder",
        "Seq2SeqDecoder",
        "Seq2SeqAttentionDecoder",
        "sequence_mask",
        "MaskedSoftmaxCELoss",
        "xavier_uniform_weights",
        "train_seq2seq",
        "predict_seq2seq",
    ),
    "The Transformer": (
        "PositionWiseFFN",
        "AddNorm",
        "TransformerEncoderBlock",
        "TransformerEncoder",
        "TransformerDecoderBlock",
        "TransformerDecoder",
    ),
    "Training a Transformer Well": ("WarmupSchedule",),
    "Where the Layer Norm Goes": (
        "PreNormEncoderBlock",
        "PreNormTransformerEncoder",
        "PreNormDecoderBlock",
        "PreNormTransformerDecoder",
    ),
    "Label Smoothing and Weight Tying": (
        "LabelSmoothedCELoss",
        "TiedTransformerDecoder",
        "show_smoothing_study",
    ),
    "Decoding: Greedy and Beam Search": ("beam_search", "show_beam_search"),
    "Grouped-Query and Memory-Efficient Attention": (
        "GroupedQueryAttention",
        "tiled_attention",
        "show_efficient_attention",
    ),
    "Decoder-Only Models, the Key–Value Cache and Rotary Embeddings": (
        "rotary_embedding",
        "CausalSelfAttention",
        "DecoderOnlyBlock",
        "PrefixLM",
        "generate",
    ),
}
"""The public names of every framework module, by section of the API page, in the page's order."""

NAMES = tuple(name for names in SECTIONS.values() for name in names)
"""Every public name, in the order of :data:`SECTIONS`."""
