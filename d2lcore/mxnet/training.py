"""Training and greedy translation of encoder–decoder models in MXNet (section 4)."""

from mxnet import autograd, gluon, np

from d2lcore.checks import check_int
from d2lcore.convert import last_query
from d2lcore.initialization import xavier_uniform_weights
from d2lcore.plotting import Animator
from d2lcore.text import encode_source
from d2lcore.timer import Timer

from .seq2seq import MaskedSoftmaxCELoss
from .weights import export_weights, load_weights


def _initialize(net, device):
    """The rule of d2lcore.initialization: Xavier-uniform weight matrices, zero biases.
    One call on a dummy batch first creates the weights whose sizes are inferred."""
    net.initialize(ctx=device, force_reinit=True)
    dummy = np.zeros((1, 1), dtype="int32", ctx=device)
    net(dummy, dummy, np.ones(1, dtype="int32", ctx=device))
    load_weights(net, xavier_uniform_weights(export_weights(net)))


def train_seq2seq(net, data_iter, lr, num_epochs, tgt_vocab, device):
    """Train ``net`` (an EncoderDecoder) with Adam on the per-token cross-entropy.

    ``net`` is first (re)initialised (d2lcore.initialization). Each batch of
    ``data_iter``, (X, X_valid_len, Y, Y_valid_len), is a teacher-forced step: the decoder
    reads <bos> followed by Y[:, :-1] and must predict Y; the gradient's global norm is
    clipped to 1. Draws the loss every 10 epochs, prints the final loss and the speed, and
    returns the loss per token of every epoch."""
    check_int("num_epochs", num_epochs, minimum=1)
    _initialize(net, device)
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr})
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    loss_fn = MaskedSoftmaxCELoss()
    animator = Animator(xlabel="epoch", ylabel="loss per token", xlim=[0, num_epochs])
    bos = tgt_vocab["<bos>"]
    losses, total_tokens = [], 0
    timer = Timer()
    for epoch in range(num_epochs):
        # Sums stay on the device: reading one (float()) would wait for MXNet's engine
        loss_sum, num_tokens = np.zeros((), ctx=device), np.zeros((), ctx=device)
        for batch in data_iter:
            X, X_valid_len, Y, Y_valid_len = (a.as_in_ctx(device) for a in batch)
            # Teacher forcing: the decoder reads <bos>, then the target shifted by one
            bos_column = np.full((Y.shape[0], 1), bos, dtype=Y.dtype, ctx=device)
            dec_input = np.concatenate((bos_column, Y[:, :-1]), axis=1)
            with autograd.record():  # also switches dropout on
                Y_hat, _ = net(X, dec_input, X_valid_len)
                loss = loss_fn(
                    Y_hat, Y, Y_valid_len
                ).sum()  # over the batch's valid tokens
                tokens = Y_valid_len.sum().astype(loss.dtype)
                per_token = loss / tokens
            per_token.backward()  # the gradient of the loss per token
            # clip_global_norm works on MXNet's legacy arrays: as_nd_ndarray() gives views
            # of the same memory. check_isfinite=True would wait for the engine each
            # batch.
            grads = [p.grad(device).as_nd_ndarray() for p in params]
            gluon.utils.clip_global_norm(grads, 1, check_isfinite=False)
            trainer.step(1)  # 1: apply the gradient as it is
            loss_sum = loss_sum + loss
            num_tokens = num_tokens + tokens
        losses.append(float(loss_sum / num_tokens))  # the one wait of the epoch
        total_tokens += int(num_tokens)
        if (epoch + 1) % 10 == 0 or epoch + 1 == num_epochs:
            animator.add(epoch + 1, losses[-1])
    seconds = timer.stop()
    print(
        f"loss per token {losses[-1]:.3f}, {total_tokens / seconds:.0f} tokens/s over "
        f"{num_epochs} epochs ({seconds:.1f} s) on {device}"
    )
    return losses


def predict_seq2seq(
    net,
    src_sentence,
    src_vocab,
    tgt_vocab,
    num_steps,
    device,
    save_attention_weights=False,
):
    """Greedy translation of one sentence by ``net`` (an EncoderDecoder on ``device``).

    The sentence is cleaned like the corpus (lowercase, a space before , . ! ?), ends with
    <eos> and is cut or padded to ``num_steps`` tokens. Starting from <bos>, the decoder
    emits its most likely token each step, until <eos> or ``num_steps`` tokens. Returns
    (translation, attention): ``attention`` lists, for every step (the <eos> step
    included), the decoder's attention weights of that step as NumPy (``last_query``:
    (num_steps,) source weights for Seq2SeqAttentionDecoder, a pair (self-attention
    (num_layers, num_heads, step + 1), encoder–decoder attention (num_layers, num_heads,
    num_steps)) for TransformerDecoder), if ``save_attention_weights``; else it is []. Outside
    ``autograd.record()`` MXNet runs in evaluation mode (no dropout)."""
    check_int("num_steps", num_steps, minimum=1)
    src, src_valid_len = encode_source(src_sentence, src_vocab, num_steps)
    eos = tgt_vocab["<eos>"]
    output, attention = [], []
    enc_X = np.array([src], dtype="int32", ctx=device)  # a batch of one
    enc_valid_len = np.array([src_valid_len], dtype="int32", ctx=device)
    enc_outputs = net.encoder(enc_X, enc_valid_len)
    state = net.decoder.init_state(enc_outputs, enc_valid_len)
    dec_X = np.array([[tgt_vocab["<bos>"]]], dtype="int32", ctx=device)
    for _ in range(num_steps):
        Y, state = net.decoder(dec_X, state)
        dec_X = Y.argmax(axis=2)  # (1, 1): the most likely token is the next input
        token = int(dec_X[0, 0])
        if save_attention_weights:  # this step's weights (see last_query)
            attention.append(last_query(net.decoder.attention_weights))
        if token == eos:
            break
        output.append(token)
    return " ".join(tgt_vocab.to_tokens(output)), attention
