// The book's own script (added by booktools.sphinx_ext): show what belongs to the framework selected in the page's
// framework tabs, and follow the tabs when the reader switches:
// - of a page's three "Open in Colab" links, the one of that framework;
// - in shared prose, of a figure that differs between the frameworks (booktools/quotes.py: a span
//   "0.36 (MXNet), 0.37 (PyTorch), 0.45 (TensorFlow)" with data-mxnet="0.36" ...), that framework's value.
(function () {
  "use strict";
  const GROUP = "framework";
  const FRAMEWORKS = ["mxnet", "pytorch", "tensorflow"];

  function selectedFramework() {
    // sphinx-design has checked the stored or ?framework= choice by the time this runs
    const label = document.querySelector(
      `input:checked + label.sd-tab-label[data-sync-group="${GROUP}"]`
    );
    if (label) return label.getAttribute("data-sync-id");
    const asked = new URLSearchParams(window.location.search).get(GROUP);
    let stored = null;
    try {
      stored = window.localStorage.getItem("sphinx-design-tab-id-" + GROUP);
    } catch (err) {
      // storage blocked: fall back to the first framework
    }
    for (const choice of [asked, stored]) {
      if (FRAMEWORKS.includes(choice)) return choice;
    }
    return FRAMEWORKS[0];
  }

  function showSelected() {
    const framework = selectedFramework();
    for (const link of document.querySelectorAll("a.d2l-colab")) {
      link.hidden = link.dataset.framework !== framework;
    }
    for (const figure of document.querySelectorAll("span.d2l-per-framework")) {
      const value = figure.dataset[framework];
      if (value !== undefined) figure.textContent = value;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    // after sphinx-design's own DOMContentLoaded handler, which restores the stored choice
    setTimeout(showSelected, 0);
    document.addEventListener("change", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.closest(".sd-tab-set")) showSelected();
    });
  });
})();
