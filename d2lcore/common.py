"""The framework-neutral names that every framework module of ``d2lcore`` re-exports."""

from d2lcore.convert import last_query, to_numpy
from d2lcore.datasets import download, download_extract, read_data_nmt
from d2lcore.evaluation import (
    Translation,
    evaluate_held_out,
    evaluate_translations,
    show_translations,
    translate_corpus,
)
from d2lcore.initialization import xavier_uniform_weights
from d2lcore.kernel_regression import loo_loss, show_loo_minimum
from d2lcore.measurements import (
    show_beam_search,
    show_bottleneck,
    show_efficient_attention,
    show_smoothing_study,
)
from d2lcore.metrics import bleu, corpus_scores
from d2lcore.plotting import (
    Animator,
    plot,
    plt,
    set_axes,
    set_figsize,
    show_heatmaps,
    use_svg_display,
)
from d2lcore.records import show_record, show_training
from d2lcore.synthetic import (
    evaluate_reversal,
    neighbour_arrays,
    reversal_arrays,
    reversal_pairs,
    show_neighbour_heads,
)
from d2lcore.text import (
    Vocab,
    build_array_nmt,
    preprocess_nmt,
    tokenize_nmt,
    truncate_pad,
)
from d2lcore.timer import Timer
from d2lcore.transformer import LAYER_NORM_EPS


def not_implemented(layer, method):
    """The NotImplementedError of a base class's ``method`` (Encoder, Decoder, AttentionDecoder) called on
    ``layer``, which does not define it."""
    return NotImplementedError(
        f"{type(layer).__name__} does not define {method}: Encoder, Decoder and AttentionDecoder are base classes; "
        f"subclass one and define {method} (as Seq2SeqEncoder and Seq2SeqAttentionDecoder do)"
    )


__all__ = [
    "LAYER_NORM_EPS",
    "not_implemented",
    "Animator",
    "Timer",
    "Translation",
    "Vocab",
    "bleu",
    "corpus_scores",
    "evaluate_held_out",
    "evaluate_translations",
    "evaluate_reversal",
    "show_translations",
    "translate_corpus",
    "build_array_nmt",
    "download",
    "download_extract",
    "last_query",
    "loo_loss",
    "plot",
    "plt",
    "preprocess_nmt",
    "read_data_nmt",
    "neighbour_arrays",
    "reversal_arrays",
    "reversal_pairs",
    "show_neighbour_heads",
    "set_axes",
    "show_loo_minimum",
    "show_record",
    "show_training",
    "show_bottleneck",
    "show_smoothing_study",
    "show_beam_search",
    "show_efficient_attention",
    "set_figsize",
    "show_heatmaps",
    "to_numpy",
    "tokenize_nmt",
    "truncate_pad",
    "use_svg_display",
    "xavier_uniform_weights",
]


def interface_names():
    """The public names of every framework module, sorted: those of ``SECTIONS`` in :mod:`d2lcore.interface`,
    the ``__all__`` of each, which tests/test_interface.py checks against what each module defines."""
    from d2lcore.interface import NAMES

    return sorted(NAMES)
