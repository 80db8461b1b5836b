// The book's own script (added by booktools.sphinx_ext): of a page's three "Open in Colab" links, show the one
// of the framework selected in the page's framework tabs, and follow the tabs when the reader switches.
(function () {
  "use strict";
  const GROUP = "framework";

  function selectedFramework(links) {
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
    const known = links.map((a) => a.dataset.framework);
    for (const choice of [asked, stored]) {
      if (known.includes(choice)) return choice;
    }
    return known[0];
  }

  function showSelected() {
    const links = Array.from(document.querySelectorAll("a.d2l-colab"));
    if (!links.length) return;
    const framework = selectedFramework(links);
    for (const link of links) link.hidden = link.dataset.framework !== framework;
  }

  document.addEventListener("DOMContentLoaded", () => {
    // after sphinx-design's own DOMContentLoaded handler, which restores the stored choice
    setTimeout(showSelected, 0);
    document.addEventListener("change", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.closest(".sd-tab-set")) showSelected();
    });
  });
})();
