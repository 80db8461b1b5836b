"""The public interface of ``d2lcore``, written down once.

``d2lcore.mxnet``, ``d2lcore.torch`` and ``d2lcore.tensorflow`` each provide exactly the names below, with these
signatures (``tests/test_interface.py`` checks it). For a layer, ``forward`` stands for the computation that
calling the layer runs: ``forward`` in MXNet and PyTorch, ``call`` in Keras. Names marked *neutral* are one
framework-neutral object that every module re-exports.

This module is documentation and a contract: it imports no framework and nothing here is meant to be called.

**Bad inputs.** Every callable below checks its arguments and raises ``TypeError`` (wrong type or dtype: an
integer tensor where floats are needed, floats where token indices are needed, a boolean mask where lengths are
needed) or ``ValueError`` (wrong rank, shape, size or range), with a message that names the argument, says what
was expected and what was given, e.g. ``X must hold token indices 0 ... 9 (vocab_size = 10); got 1 out of range,
e.g. [12]``. The errors come from d2lcore's checks (``d2lcore.checks``), never from inside a framework; the only
other kinds are ``NotImplementedError`` from the base classes ``Encoder``, ``Decoder`` and ``AttentionDecoder``,
and the download errors of ``d2lcore.datasets``. In particular:

- token indices (``X`` of the encoders and decoders, ``label`` of ``MaskedSoftmaxCELoss``) must be integers in
  0 ... vocab_size - 1: a model built for a smaller vocabulary than its data is refused, not clamped or wrapped;
- lengths (``valid_lens``, ``valid_len``, ``enc_valid_lens``) must be whole numbers >= 0 (integers, or floats
  that are whole numbers), not booleans; a length above the number of steps means "all of them";
- sizes (``vocab_size``, ``num_hiddens``, ``num_layers``, ...) are ints >= 1; ``dropout`` a number in [0, 1);
  ``lr`` a finite number >= 0; ``num_epochs`` an int >= 1;
- a layer whose input sizes are inferred on its first call refuses a later input of another size;
- ``train_seq2seq`` refuses a ``data_iter`` that gives no target tokens in an epoch (empty, used up, or every
  length 0), and the vocabularies must hold the reserved tokens that training and translation use.

The checks of a taught class or function live outside its code, in ``d2lcore/<framework>/checks.py``, and the
decorator ``checked`` attaches them (d2lcore.boundary); they run once per outermost call, not again in the layers
it calls. They cost one small reduction per call where a tensor's values are checked (token indices, lengths),
none where only shapes and dtypes are. Inside a traced TensorFlow graph (``tf.function``) values are not checked;
``train_seq2seq`` checks each batch before its compiled step.

**Valid edge cases.** NaN in, NaN out: a NaN score or logit that is used gives NaN (in ``masked_softmax`` the
NaN key's weight; PyTorch and TensorFlow make the whole row NaN, MXNet's softmax only that key). A masked score is
ignored whatever it holds (NaN, inf or -inf): the masking replaces it, so a masked key never influences the
output of ``masked_softmax`` or of the attention layers. A length of 0 gives a row of zero weights
(``masked_softmax``) or a loss of 0 (``MaskedSoftmaxCELoss``). An empty batch (batch 0) gives an empty result
in ``masked_softmax`` and ``sequence_mask``. Sequences must have at least one step in the encoders and decoders.
``tests/test_bad_inputs.py`` generates both kinds of cases for every callable, in every framework.
"""

# --- neutral: plotting, timing, checks ----------------------------------------------------------------------


def show_heatmaps(matrices, xlabel, ylabel, titles=None, figsize=None, cmap="Reds"):
    """*neutral.* A grid of heatmaps; matrices: (num_rows, num_cols, num_queries, num_keys), any framework."""


def plot(
    X,
    Y=None,
    xlabel=None,
    ylabel=None,
    legend=None,
    xlim=None,
    ylim=None,
    xscale="linear",
    yscale="linear",
    fmts=("-", "m--", "g-.", "r:"),
    figsize=(3.5, 2.5),
    axes=None,
):
    """*neutral.* Line plot of one or several series (1-D tensors or lists of them)."""


def set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend):
    """*neutral.* Configure matplotlib axes."""


def set_figsize(figsize=(3.5, 2.5)):
    """*neutral.* Default figure size, in inches."""


def use_svg_display():
    """*neutral.* Show notebook figures as SVG."""


plt = "matplotlib.pyplot"
"""*neutral.* matplotlib's pyplot module."""


class Animator:
    """*neutral.* A training curve that redraws in place in a notebook."""

    def __init__(
        self,
        xlabel=None,
        ylabel=None,
        legend=None,
        xlim=None,
        ylim=None,
        xscale="linear",
        yscale="linear",
        fmts=("-", "m--", "g-.", "r:"),
        nrows=1,
        ncols=1,
        figsize=(3.5, 2.5),
    ): ...

    def add(self, x, y, draw=True):
        """Add a point to each curve; redraw unless ``draw`` is False."""

    def add_epoch(self, epoch, num_epochs, y, every=10, max_draws=10):
        """In a training loop: a point after the first epoch, every ``every`` epochs (about ten points in a
        short run) and after the last; at most ``max_draws`` drawings."""

    def draw(self):
        """Draw the curves with all the points added so far."""


class Timer:
    """*neutral.* Wall-clock timer over several runs."""

    def __init__(self): ...

    def start(self): ...

    def stop(self): ...

    def avg(self): ...

    def sum(self): ...

    def cumsum(self): ...


def check_shapes(**named):
    """*neutral.* ``check_shapes(keys=(k, "n m"), ...)``: check shapes against named dimensions; return the sizes."""


def check_int(name, value, minimum=None):
    """*neutral.* Check that ``value`` is an int (not a bool) of at least ``minimum``; return it."""


def check_heads(num_hiddens, num_heads):
    """*neutral.* Check that num_heads (an int >= 1) divides num_hiddens (None: not checked); return num_heads."""


def valid_lens_spec(valid_lens, queries="queries"):
    """*neutral.* The check_shapes spec of valid_lens: "batch" for (batch,), "batch <queries>" for (batch, queries)."""


def check_lengths(name, values):
    """*neutral.* Check that the NumPy array of lengths ``values`` holds whole numbers >= 0."""


def check_positions(X, num_hiddens, offset, max_len):
    """*neutral.* X (batch, steps, num_hiddens) at positions offset ... offset + steps - 1 fits max_len: steps."""


def check_real(name, value, minimum=None, below=None, above=None, finite=True):
    """*neutral.* Check that ``value`` is a number (not a bool), finite unless told, within the bounds given;
    return it as a float."""


def check_dropout(dropout):
    """*neutral.* Check a dropout probability, 0 <= dropout < 1; return it as a float."""


def check_width(name, shape, width, batch=None):
    """*neutral.* ``shape`` must be (batch, steps, width), the batch ``batch`` if given; returns it as a tuple."""


def check_decoder_state(state, num_layers, num_hiddens, batch=None):
    """*neutral.* Check a TransformerDecoder state (enc_outputs, enc_valid_lens, caches); returns the number of
    positions its caches hold."""


def check_add_norm(layer, X, Y):
    """*neutral.* For AddNorm ``layer``: X has the width the layer was built for, Y the shape of X."""


def check_sizes(**sizes):
    """*neutral.* ``check_sizes(vocab_size=v, ...)``: each size an int >= 1."""


def check_steps(name, steps):
    """*neutral.* A sequence batch must have at least one time step (``steps`` None: not known, not checked)."""


def check_tuple(name, value, fields):
    """*neutral.* Check that ``value`` is a tuple or list of ``len(fields)`` entries (e.g. a decoder state);
    return it as a tuple."""


def check_vocab(name, vocab, tokens):
    """*neutral.* Check that the Vocab ``vocab`` holds the reserved ``tokens``, e.g. ``("<bos>", "<eos>")``."""


def check_built_widths(layer, **inputs):
    """*neutral.* ``check_built_widths(self, queries=queries)``: an input's last dimension must stay the one
    that ``layer`` saw on its first call, when its weights were built."""


def check_epoch_tokens(epoch, tokens):
    """*neutral.* A training epoch must see target tokens (ValueError if ``tokens`` is 0)."""


def check_bool(name, value):
    """*neutral.* Check that ``value`` is True or False (a layer's ``bias`` switch); return it."""


def check_training_points(n):
    """*neutral.* A regression's training loop needs n >= 1 training points (ValueError otherwise)."""


def check_seq2seq_batch(batch):
    """*neutral.* A batch of a training loop's data_iter must be (X, X_valid_len, Y, Y_valid_len) of shapes
    (batch, steps), (batch,), (batch, tgt_steps), (batch,); return it as a tuple. Shapes only: no wait."""


def not_implemented(layer, method):
    """*neutral.* The NotImplementedError of a base class's ``method`` that ``layer`` does not define."""


def checked(obj):
    """The decorator of a taught class or function (``@d2l.checked``): it attaches this framework's argument checks
    of the same name from outside the code (d2lcore.boundary), run once per outermost call; returns the class, or
    the checked function."""


def check_float(**tensors):
    """``check_float(X=X, ...)``: each must be a floating-point tensor of the framework (TypeError otherwise)."""


def check_valid_lens(name, valid_lens):
    """The tensor ``valid_lens`` must hold lengths, whole numbers >= 0; returns whether one may be 0. Eagerly the
    values are read, once per call of a layer's entry (PyTorch does not read again a tensor just checked, the
    same object unmodified); inside a traced TensorFlow graph the graph checks them (evaluate() turns a failure
    into a ValueError) and the result is True."""


def check_token_ids(name, X, vocab_size):
    """X must be an integer tensor of token indices 0 ... vocab_size - 1: one reduction, and one wait for the
    device, per call (inside a traced TensorFlow graph only the dtype is checked)."""


def check_decoder_init(enc_outputs, enc_valid_lens):
    """For an RNN attention decoder's init_state: enc_outputs (outputs (batch, src_steps, h), state), enc_valid_lens
    None or (batch,) lengths; returns (outputs, state)."""


def check_decoder_call(X, state, vocab_size):
    """For an RNN attention decoder's forward: X (batch, steps >= 1) token indices, state (enc_outputs (batch,
    src_steps, h), hidden, enc_valid_lens None or (batch,)); returns state as a tuple."""


def show_record(name, text, digits=None, **fields):
    """*neutral.* Show the line ``text`` as the record ``name`` with ``fields``, which tools read from the executed
    notebook (d2lcore.records); ``digits``: the significant digits its float fields keep, where a checked cell
    shows it; returns the Record."""


def show_training(losses, tokens, seconds, device, load=None):
    """*neutral.* Show the record "training" of a finished run (loss per token of every epoch, target tokens in
    all, seconds, device; the load average at the end and the CPU cores as fields only): the same line and
    fields in every framework; returns the Record."""


def show_bottleneck(path=None):
    """*neutral.* Draw the measurement of benchmarks/bottleneck.py that d2lcore carries (or the file at
    ``path``): translation quality by source length, without and with attention, over seeds; show its record
    "bottleneck" (means and spread over the seeds, the settings and the machine) and return the Record."""


LAYER_NORM_EPS = 1e-5
"""*neutral.* The epsilon of every AddNorm's layer normalisation, in every framework."""


def to_numpy(x):
    """*neutral.* Any framework's tensor as a NumPy array."""


def last_query(weights):
    """*neutral.* weights (batch, ..., queries, keys) -> NumPy (..., keys): the last query of example 0; a
    tuple of tensors gives a tuple of arrays."""


# --- per framework: random seeds and devices ------------------------------------------------------------------


def set_seed(seed):
    """Seed Python's, NumPy's and the framework's random number generators."""


def num_gpus():
    """The number of GPUs the framework can use."""


def cpu():
    """The framework's CPU device object."""


def try_gpu(i=0):
    """GPU ``i`` if it exists, else the CPU, as the framework's device object (never a context manager):
    ``torch.device``, ``mxnet.Context`` or ``tf.config.LogicalDevice``."""


# --- per framework: Attention Pooling: Nadaraya–Watson Kernel Regression -------------------------------------


class NWKernelRegression:
    """Nadaraya–Watson regression with a learnable Gaussian kernel width ``w`` (initialised to 1).

    After a forward pass, ``attention_weights`` holds the (n, m) weights of the last call.
    """

    def __init__(self): ...

    def forward(self, queries, keys, values):
        """queries: (n,); keys, values: (n, m) -> predictions (n,)."""


def train_nw(net, queries, keys, values, targets, lr=0.5, num_epochs=5):
    """Full-batch SGD on sum_i (f(x_i) - y_i)^2 / 2 with a live loss curve; returns the per-epoch losses."""


def loo_loss(x, y, w):
    """*neutral.* The leave-one-out loss sum_i (f(x_i) - y_i)^2 / 2 of Nadaraya–Watson regression with kernel
    width ``w``, each training point predicted from the others; x, y: (n,) NumPy arrays, n >= 2 -> float."""


def show_loo_minimum(x, y, lr):
    """*neutral.* Show and return the record ``"loo"``: the minimum of ``loo_loss`` over w in 0.5 ... 12 (fields
    ``w_best``, ``loss_best``), its slope at w = 1 (``slope_at_1``) and where one step of size ``lr`` lands
    (``w_first``); x, y: (n,)."""


# --- per framework: Attention Scoring Functions --------------------------------------------------------------
# A layer's forward pass runs in evaluation mode unless the framework's training mode is on: MXNet inside
# ``autograd.record()``, PyTorch after ``net.train()``, Keras when ``training=True`` is passed (Keras layers
# declare ``training=None`` as a last extra parameter of ``call``; it is the only allowed difference).


def masked_softmax(X, valid_lens):
    """Softmax over the last axis of X (batch, queries, keys), keeping only the first ``valid_lens`` keys.

    valid_lens: None (no mask), (batch,) (one length per example) or (batch, queries) (one per query), of
    integer values (or floats that are whole numbers). Masked keys get exactly zero weight and zero gradient.
    A length above the number of keys means "all keys"; a length of 0 gives a row of zeros (the query attends
    to nothing). Negative or fractional lengths, wrong ranks or shapes raise ValueError; a boolean mask or an
    integer X raises TypeError. An empty batch gives an empty result.
    """


class AdditiveAttention:
    """Additive attention: score a(q, k) = w_v^T tanh(W_q q + W_k k); W_q, W_k: (num_hiddens, d), w_v: (num_hiddens,).

    Input sizes are inferred on the first call. ``attention_weights`` holds the last weights,
    (batch, queries, keys).
    """

    def __init__(self, num_hiddens, dropout): ...

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v) -> (batch, queries, v)."""


class DotProductAttention:
    """Scaled dot-product attention: softmax(Q K^T / sqrt(d)) V. ``attention_weights``: (batch, queries, keys)."""

    def __init__(self, dropout): ...

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (batch, queries, d), keys (batch, keys, d), values (batch, keys, v) -> (batch, queries, v)."""


# --- per framework: Multi-Head Attention ---------------------------------------------------------------------


def transpose_qkv(X, num_heads):
    """Split the last axis into heads: (batch, n, num_hiddens) -> (batch * num_heads, n, num_hiddens / num_heads),
    example b's heads at rows b * num_heads ... b * num_heads + num_heads - 1."""


def transpose_output(X, num_heads):
    """Undo transpose_qkv: (batch * num_heads, n, d) -> (batch, n, num_heads * d)."""


class MultiHeadAttention:
    """Multi-head scaled dot-product attention with projections W_q, W_k, W_v, W_o to num_hiddens features.

    ``num_hiddens`` must be divisible by ``num_heads`` (ValueError otherwise). ``attention_weights``: the last
    per-head weights, (batch, num_heads, queries, keys).
    """

    def __init__(self, num_hiddens, num_heads, dropout, bias=False): ...

    def forward(self, queries, keys, values, valid_lens=None):
        """queries (batch, queries, q), keys (batch, keys, k), values (batch, keys, v) -> (batch, queries,
        num_hiddens); valid_lens as in masked_softmax."""


# --- per framework: Self-Attention and Positional Encoding ---------------------------------------------------


class PositionalEncoding:
    """Adds sinusoidal position encodings to X, then dropout. ``P``: the (1, max_len, num_hiddens) table.

    P[0, i, 2j] = sin(i / 10000^(2j/num_hiddens)), P[0, i, 2j+1] = cos(i / 10000^(2j/num_hiddens)).
    """

    def __init__(self, num_hiddens, dropout, max_len=1000): ...

    def forward(self, X, offset=0):
        """X (batch, steps, num_hiddens) -> same shape; rows get positions offset, ..., offset + steps - 1."""


# --- per framework: the same weights in every framework --------------------------------------------------------


def export_weights(net):
    """A layer's parameters as ``{canonical name: NumPy array}``. Names are the attribute paths of the layer
    (``"W_q.weight"``, ``"attention.W_k.weight"``); a dense layer's ``weight`` is (out, in), as in y = x W^T + b."""


def load_weights(net, weights):
    """Load ``{canonical name: array}`` (from export_weights in any framework) into ``net``, in place.

    The layer must have been called once (so that its input sizes are known). Missing, unexpected or
    wrongly shaped entries raise ValueError naming them."""


# --- neutral: the English–French data, tokens and vocabularies (Sequence-to-Sequence Toolkit) ------------------


def read_data_nmt(split="train", path=None):
    """*neutral.* The text of an English–French corpus in Tatoeba's format (``English<TAB>French`` lines).

    ``split``: ``"train"`` or ``"heldout"`` of the project's own corpus in ``data/fra-eng/``, whose SHA-256 is
    checked; ``path``: read that file instead (e.g. the full Tatoeba corpus from ``download_extract``)."""


def preprocess_nmt(text):
    """*neutral.* Replace no-break spaces by spaces, lowercase, and put a space before , . ! ? where missing."""


def tokenize_nmt(text, num_examples=None):
    """*neutral.* Word tokens of the first ``num_examples`` pairs (all if None): (source, target) lists of token
    lists. Lines that are not exactly two tab-separated fields are skipped and not counted."""


class Vocab:
    """*neutral.* Token <-> index. Index 0 is ``<unk>``, then the reserved tokens, then the tokens seen at least
    ``min_freq`` times, most frequent first (ties: first seen first). Unknown tokens map to 0."""

    def __init__(self, tokens=None, min_freq=0, reserved_tokens=None): ...

    def __len__(self): ...

    def __getitem__(self, tokens):
        """A token's index, or a list of indices for a list or tuple of tokens."""

    def to_tokens(self, indices):
        """An index's token, or a list of tokens for a list of indices."""


def truncate_pad(line, num_steps, padding_token):
    """*neutral.* The first ``num_steps`` items of ``line``, right-padded with ``padding_token`` if shorter."""


def build_array_nmt(lines, vocab, num_steps):
    """*neutral.* Token lists -> (array (n, num_steps) of indices with ``<eos>`` appended, then truncated or
    padded; valid lengths (n,): the non-pad entries), both NumPy int32."""


def reversal_pairs(num_examples, num_symbols=8, min_len=5, max_len=8, seed=0):
    """*neutral.* ``num_examples`` random sequences of the first ``num_symbols`` lowercase letters, of lengths
    ``min_len ... max_len``, and their reversals: (source, target) lists of token lists, ``target[n] ==
    source[n][::-1]``; the same pairs for the same arguments (NumPy's ``default_rng(seed)``)."""


def reversal_arrays(num_examples, num_steps, num_symbols=8, min_len=5, max_len=8, seed=0):
    """*neutral.* The pairs of ``reversal_pairs`` as ((X (n, num_steps), X_valid_len (n,), Y (n, num_steps),
    Y_valid_len (n,)), vocab), NumPy int32 rows ending with ``<eos>``, padded with ``<pad>``, for ``load_array``
    and ``train_seq2seq``; one vocabulary for source and target (reserved ``<pad>``, ``<bos>``, ``<eos>``, then
    the symbols). ``num_steps`` must be at least ``max_len + 1``."""


def evaluate_reversal(translate, num_examples=100, seed=1):
    """*neutral.* Reverse the strings of ``reversal_pairs(num_examples, seed=seed)`` with ``translate`` (source
    string -> (output string, one (num_steps,) array of source weights per output step)) and show the record
    "reversal": ``exact``, ``strings``, ``steps``, ``share``, the share of the symbols' output steps i whose
    largest weight falls on source position L - 1 - i, and ``weight``, their mean weight there. Returns the
    Record."""


def neighbour_arrays(num_examples, num_steps=8, num_symbols=8, seed=0):
    """*neutral.* ``num_examples`` random strings of ``num_steps`` symbols as (X (n, num_steps, num_symbols +
    num_steps) float32: each position's one-hot symbol, then its one-hot position; Y (n, num_steps, 2) int32:
    the symbols at positions i - 1 and i + 1, around the circle), NumPy; the same for the same arguments."""


def show_neighbour_heads(weights):
    """*neutral.* Show the record "heads" of self-attention weights (batch, num_heads, n, n) on the task of
    ``neighbour_arrays``: each head's share of queries whose largest weight falls on i - 1 and on i + 1; fields
    ``left``, ``right`` (the best head's share for each), ``left_head``, ``right_head``, ``queries``."""


def download(name, cache_dir=None):
    """*neutral.* Download a registered data file to ``cache_dir`` (default: ``~/.cache/d2lcore``, or
    ``$D2L_DATA_DIR/downloads``) unless a copy with the right checksum is there; verified, written atomically.
    Returns its path. Checksums are SHA-256, except for d2l's frozen ``fra-eng.zip`` mirror, whose publisher
    gives only a SHA-1."""


def download_extract(name, cache_dir=None):
    """*neutral.* ``download`` a registered archive and extract it safely next to it; returns the folder.

    Downloads have an overall deadline (``d2lcore.datasets.DEADLINE``); a killed download's or extraction's
    ``.part`` file or folder is removed by a later call; an archive that would expand beyond
    ``MAX_EXTRACTED_BYTES`` or ``MAX_RATIO`` times its size is refused; an extracted folder is reused only if
    every file it had is still there with its size."""


def bleu(pred_seq, label_seq, k):
    """*neutral.* Per-sentence BLEU (D2L's variant, not corpus BLEU) of a space-separated
    prediction against one label, n-grams up to k weighted 1/2**n (fewer when the prediction is shorter; 0 for
    an empty prediction)."""


def corpus_scores(predictions, references):
    """*neutral.* Corpus BLEU and chrF, as sacreBLEU computes them, of n space-separated predictions against n
    lists of one or more references: ``{"bleu": ..., "chrf": ...}``, floats in 0 ... 100. BLEU splits at spaces
    (the book's text is tokenized); chrF uses sacreBLEU's defaults (character 6-grams, beta 2)."""


class Translation:
    """*neutral.* One translated sentence, a named tuple: ``source``, ``output``, ``bleu`` (per-sentence BLEU,
    k = 2, against the best reference), ``reference`` (that one) and ``references`` (all the corpus gives)."""


def translate_corpus(translate, text, num_examples=None):
    """*neutral.* Translate every distinct English sentence of a corpus (its first ``num_examples`` pairs) with
    ``translate`` (str -> str) and score it against the best of its references: a list of ``Translation``."""


def evaluate_translations(translate, tgt_vocab, name="bleu"):
    """*neutral.* Translate the first 600 training pairs and the held-out sentences with ``translate`` and show
    the records ``<name>_training`` and ``<name>_held_out`` (sentences, bleu, exact, unknown, corpus_bleu,
    chrf); returns the two lists of ``Translation``, best first."""


def evaluate_held_out(translate, tgt_vocab, name):
    """*neutral.* Translate the held-out sentences with ``translate`` and show the record ``name`` (the fields of
    ``evaluate_translations``'s records); returns the list of ``Translation``, best first."""


def show_translations(translate, sources, references, name="test_sentences"):
    """*neutral.* Translate ``sources`` (English str) with ``translate``, print each with its per-sentence BLEU
    (k = 2) against ``references`` (French str, one per source), and show the record ``name`` (``exact``,
    ``sentences``); returns the translations."""


# --- per framework: data iterators (Sequence-to-Sequence Toolkit) ----------------------------------------------


def load_array(data_arrays, batch_size, is_train=True):
    """An iterable over minibatches of the framework's tensors made from NumPy arrays with equal first
    dimensions; shuffled each epoch with NumPy's global generator when ``is_train``, so that every framework
    sees the same batches after the same ``set_seed``."""


def load_data_nmt(batch_size, num_steps, num_examples=600):
    """(data_iter, src_vocab, tgt_vocab) for exactly the first ``num_examples`` pairs of the project's training
    corpus. Each batch: (X (batch, num_steps), X_valid_len (batch,), Y (batch, num_steps), Y_valid_len (batch,)),
    integer tensors. Vocabularies: min_freq 2, reserved ``<pad>``, ``<bos>``, ``<eos>``."""


# --- per framework: encoder–decoder models (Sequence-to-Sequence Toolkit, Bahdanau Attention) -----------------


class Encoder:
    """Base class: maps a source batch to encoder outputs. Its own ``forward`` raises NotImplementedError
    saying to subclass it (so do Decoder's and AttentionDecoder's methods)."""

    def __init__(self): ...

    def forward(self, X, *args): ...


class Decoder:
    """Base class: ``init_state`` turns encoder outputs into a state; ``forward`` maps (X, state) to
    (outputs, new state)."""

    def __init__(self): ...

    def init_state(self, enc_outputs, *args): ...

    def forward(self, X, state): ...


class AttentionDecoder(Decoder):
    """A decoder whose ``attention_weights`` property returns the attention weights of its last call (None before
    the first call)."""

    @property
    def attention_weights(self): ...


class EncoderDecoder:
    """``encoder(enc_X, *args)``, then ``decoder.init_state(outputs, *args)``, then ``decoder(dec_X, state)``:
    returns ``(Y_hat, state)``."""

    def __init__(self, encoder, decoder): ...

    def forward(self, enc_X, dec_X, *args): ...


class Seq2SeqEncoder(Encoder):
    """Embedding + ``num_layers``-layer GRU (dropout between layers). X (batch, steps >= 1) of integer token
    indices 0 ... vocab_size - 1 ->
    (outputs (batch, steps, num_hiddens), state (num_layers, batch, num_hiddens)), the same layout in every
    framework."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0): ...

    def forward(self, X, *args): ...


class Seq2SeqDecoder(Decoder):
    """The decoder without attention: an embedding, a ``num_layers``-layer GRU that starts from the encoder's
    final state and reads, at every step, one fixed context (the final state of the encoder's last layer) beside
    the embedded token, and a dense layer to vocab_size. State: (context (batch, num_hiddens), hidden
    (num_layers, batch, num_hiddens)); ``init_state`` does not use the source lengths."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0): ...

    def init_state(self, enc_outputs, enc_valid_lens=None): ...

    def forward(self, X, state):
        """X (batch, steps) -> (logits (batch, steps, vocab_size), new state)."""


class Seq2SeqAttentionDecoder(AttentionDecoder):
    """Bahdanau's decoder: at each step, additive attention with the last layer's previous state as query over
    the encoder outputs gives a context, fed to the GRU with the embedded token. State: (enc_outputs (batch,
    src_steps, num_hiddens), hidden (num_layers, batch, num_hiddens), enc_valid_lens (batch,))."""

    def __init__(self, vocab_size, embed_size, num_hiddens, num_layers, dropout=0): ...

    def init_state(self, enc_outputs, enc_valid_lens): ...

    def forward(self, X, state):
        """X (batch, steps) -> (logits (batch, steps, vocab_size), new state)."""


def sequence_mask(X, valid_len, value=0):
    """X (batch, steps, ...) with the entries at steps >= valid_len[b] replaced by ``value`` (a new tensor).

    valid_len: (batch,) whole numbers >= 0 (ValueError otherwise, TypeError for booleans); ``value`` a number
    (-inf allowed). An empty batch gives an empty result."""


class MaskedSoftmaxCELoss:
    """Cross-entropy summed over the valid tokens of each sequence: pred (batch, steps, vocab) logits, label
    (batch, steps), valid_len (batch,) -> (batch,). Dividing the sum by the number of valid tokens gives the
    per-token loss that ``train_seq2seq`` reports. ``label`` must hold integers 0 ... vocab - 1; a sequence of
    valid_len 0 has a loss of 0."""

    def __init__(self): ...

    def forward(self, pred, label, valid_len): ...


def xavier_uniform_weights(weights):
    """*neutral.* New ``{canonical name: array}`` for ``export_weights``' output: every weight matrix drawn
    from U(-a, a), a = sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010), biases zero, other entries kept;
    drawn with NumPy's global generator, so every framework starts from the same weights after ``set_seed``."""


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Adam with gradient clipping (global norm 1) on the per-token loss, teacher forcing, a live loss curve;
    shows the record "training" (epochs, seconds, tokens_per_second, loss_per_token, device) as the line
    "loss per token L, N tokens/s over E epochs (S s) on DEVICE". Returns the per-epoch
    losses. ``tgt_vocab`` must hold ``<bos>``; ValueError if an epoch gives no target tokens."""


def predict_seq2seq(
    net,
    src_sentence,
    src_vocab,
    tgt_vocab,
    num_steps,
    device,
    save_attention_weights=False,
):
    """Greedy decoding of one sentence -> (translation, list of the attention weights of each step, or []).
    ``save_attention_weights=True`` needs a decoder with attention weights (ValueError otherwise)."""


# --- per framework: The Transformer ---------------------------------------------------------------------------
# Post-norm blocks as in Vaswani et al. (2017). Input sizes are inferred on the first call. Every AddNorm uses
# layer normalisation over the last axis with epsilon d2lcore.transformer.LAYER_NORM_EPS = 1e-5.


class PositionWiseFFN:
    """The same two-layer MLP at every position: dense2(relu(dense1(X))); X (..., d) -> (..., ffn_num_outputs)."""

    def __init__(self, ffn_num_hiddens, ffn_num_outputs): ...

    def forward(self, X): ...


class AddNorm:
    """Residual connection then layer normalisation: LayerNorm(dropout(Y) + X); X, Y (..., d) -> (..., d).

    In PyTorch ``AddNorm(num_hiddens, dropout)``, with d = num_hiddens: ``nn.LayerNorm`` is built for its width."""

    def __init__(self, dropout): ...

    def forward(self, X, Y): ...


class TransformerEncoderBlock:
    """Self-attention then the FFN, each followed by AddNorm: (batch, steps, num_hiddens) -> same shape."""

    def __init__(
        self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False
    ): ...

    def forward(self, X, valid_lens=None): ...


class TransformerEncoder(Encoder):
    """Embedding * sqrt(num_hiddens) + positional encoding, then num_layers encoder blocks.

    X (batch, steps) token indices -> (batch, steps, num_hiddens). ``attention_weights``: the last call's
    self-attention weights, (batch, num_layers, num_heads, steps, steps). Positions beyond ``max_len`` raise.
    """

    def __init__(
        self,
        vocab_size,
        num_hiddens,
        ffn_num_hiddens,
        num_heads,
        num_layers,
        dropout,
        use_bias=False,
        max_len=1000,
    ): ...

    def forward(self, X, valid_lens=None): ...


class TransformerDecoderBlock:
    """Causal self-attention, encoder–decoder attention, FFN, each followed by AddNorm.

    X (batch, steps, num_hiddens) at positions past ... past + steps - 1, enc_outputs (batch, src_steps,
    num_hiddens), cache None or (batch, past, num_hiddens): the block's earlier inputs. Returns (output (batch,
    steps, num_hiddens), key_values (batch, past + steps, num_hiddens)). The causal mask depends only on the
    positions, never on the training mode.
    """

    def __init__(
        self, num_hiddens, ffn_num_hiddens, num_heads, dropout, use_bias=False
    ): ...

    def forward(self, X, enc_outputs, enc_valid_lens=None, cache=None): ...


class TransformerDecoder(AttentionDecoder):
    """Embedding * sqrt(num_hiddens) + the positional encoding of each token's real position, num_layers decoder
    blocks, then a dense layer to vocab_size.

    State: (enc_outputs, enc_valid_lens, caches), caches a tuple of num_layers entries (None, or (batch, past,
    num_hiddens)). Decoding step by step through the caches gives the same logits as decoding at once. A wrong
    state raises ValueError. ``attention_weights``: (self-attention (batch, num_layers, num_heads, steps, past +
    steps), encoder–decoder attention (batch, num_layers, num_heads, steps, src_steps)).
    """

    def __init__(
        self,
        vocab_size,
        num_hiddens,
        ffn_num_hiddens,
        num_heads,
        num_layers,
        dropout,
        use_bias=False,
        max_len=1000,
    ): ...

    def init_state(self, enc_outputs, enc_valid_lens=None): ...

    def forward(self, X, state): ...
