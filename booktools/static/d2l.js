// The book's own script (added by booktools.sphinx_ext).
// 1. Show what belongs to the framework selected in the page's framework tabs, and follow the tabs when the reader
//    switches:
//    - of a page's three "Open in Colab" links, the one of that framework;
//    - in shared prose, of a figure that differs between the frameworks (booktools/quotes.py: a span
//      "0.36 (MXNet), 0.37 (PyTorch), 0.45 (TensorFlow)" with data-mxnet="0.36" ...), that framework's value.
// 2. The language menu, in the article's header: one entry per <link rel="alternate" hreflang> of the page's head
//    (booktools.sphinx_ext.language_links), the page's own language marked. An entry opens the same page in its
//    language at the same section (location.hash), with the framework of the page's tabs selected (?framework=,
//    which sphinx-design reads; the other query parameters are kept). All languages share one origin, and so the
//    framework remembered in localStorage too.
// 3. sphinx-copybutton's tooltips in the page's language: its script knows a few languages by code (not "tr", nor
//    the "zh-Hans" of our pages), so the words come from the book's theme catalogue (locales/<language>/
//    LC_MESSAGES/sphinx.po, in Sphinx's translations script) when its buttons are made.
// 4. The words that sphinx-book-theme writes in English whatever the language (its sidebar buttons' tooltips, its
//    navigation's label), from the same catalogue.
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

  // ------------------------------------------------------------------------------------------- language menu

  function hasFrameworkTabs() {
    return document.querySelector(`label.sd-tab-label[data-sync-group="${GROUP}"]`) !== null;
  }

  // The address of this page in the language of `link`: same section, same framework, same other parameters.
  function addressIn(link) {
    const url = new URL(link.getAttribute("data-page"), window.location.href);
    const params = new URLSearchParams(window.location.search);
    if (hasFrameworkTabs()) params.set(GROUP, selectedFramework());
    url.search = params.toString();
    url.hash = window.location.hash;
    return url.href;
  }

  function languageMenu() {
    const header = document.querySelector(".article-header-buttons");
    const alternates = Array.from(document.querySelectorAll('head link[rel="alternate"][hreflang]'));
    if (!header || alternates.length < 2) return;
    const pageLanguage = (document.documentElement.lang || "").toLowerCase();
    const label = document.querySelector('meta[name="d2l-language-label"]')?.content || "Language";

    const menu = document.createElement("div");
    menu.className = "d2l-language-menu";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "btn btn-sm pst-navbar-icon d2l-language-button";
    button.setAttribute("aria-expanded", "false");
    button.setAttribute("aria-controls", "d2l-language-list");
    button.title = label;
    const icon = document.createElement("i");
    icon.className = "fa-solid fa-language fa-lg";
    icon.setAttribute("aria-hidden", "true");
    const code = document.createElement("span");
    code.className = "d2l-language-code";
    button.append(icon, code);

    const list = document.createElement("ul");
    list.id = "d2l-language-list";
    list.className = "d2l-language-list";
    list.setAttribute("aria-label", label);
    list.hidden = true;
    let current = null;
    for (const alternate of alternates) {
      const hreflang = alternate.getAttribute("hreflang");
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.className = "d2l-language-entry";
      link.setAttribute("data-page", alternate.getAttribute("href"));
      link.href = alternate.href;
      link.hreflang = hreflang;
      link.lang = hreflang;
      link.textContent = alternate.title || hreflang;
      if (hreflang.toLowerCase() === pageLanguage) {
        link.setAttribute("aria-current", "true");
        current = link;
      }
      item.append(link);
      list.append(item);
    }
    const shown = current || list.querySelector("a");
    code.textContent = shown.hreflang.split("-")[0].toUpperCase();
    button.setAttribute("aria-label", `${label}: ${shown.textContent}`);
    menu.append(button, list);
    header.prepend(menu);

    const entries = () => Array.from(list.querySelectorAll("a"));
    const update = () => entries().forEach((link) => (link.href = addressIn(link)));
    const open = (focus) => {
      update();
      list.hidden = false;
      button.setAttribute("aria-expanded", "true");
      if (focus) (current || entries()[0]).focus();
    };
    const close = (refocus) => {
      list.hidden = true;
      button.setAttribute("aria-expanded", "false");
      if (refocus) button.focus();
    };
    button.addEventListener("click", () => (list.hidden ? open(false) : close(false)));
    button.addEventListener("keydown", (event) => {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        open(true);
      }
    });
    list.addEventListener("keydown", (event) => {
      const all = entries();
      const at = all.indexOf(document.activeElement);
      const to = { ArrowDown: at + 1, ArrowUp: at - 1, Home: 0, End: all.length - 1 }[event.key];
      if (event.key === "Escape") {
        event.preventDefault();
        close(true);
      } else if (to !== undefined) {
        event.preventDefault();
        all[(to + all.length) % all.length].focus();
      }
    });
    // the address is made when the reader chooses, so that it has the section and framework of that moment
    list.addEventListener("click", (event) => {
      const link = event.target.closest("a");
      if (link) link.href = addressIn(link);
    });
    button.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && !list.hidden) close(true);
    });
    document.addEventListener("click", (event) => {
      if (!list.hidden && !menu.contains(event.target)) close(false);
    });
    menu.addEventListener("focusout", (event) => {
      if (!list.hidden && event.relatedTarget && !menu.contains(event.relatedTarget)) close(false);
    });
    window.addEventListener("hashchange", update);
  }

  function copyButtonWords() {
    const lang = document.documentElement.lang;
    // messages and locale: sphinx-copybutton's globals (its script comes before this one); Documentation.gettext:
    // Sphinx's, whose translations script comes after this one, so the words are read when the buttons are made
    if (!lang || lang === "en" || typeof messages === "undefined" || typeof Documentation === "undefined") return;
    const word = (text) => Documentation.gettext(text);
    Object.defineProperty(messages, lang, {
      get: () => ({
        copy: word("Copy"),
        copy_to_clipboard: word("Copy to clipboard"),
        copy_success: word("Copied!"),
        copy_failure: word("Failed to copy"),
      }),
    });
    locale = lang; // eslint-disable-line no-global-assign
  }

  copyButtonWords();

  function themeWords() {
    const lang = document.documentElement.lang;
    if (!lang || lang === "en" || typeof Documentation === "undefined") return;
    const words = {
      "button.primary-toggle": "Toggle primary sidebar",
      "button.secondary-toggle": "Toggle secondary sidebar",
    };
    for (const [selector, text] of Object.entries(words)) {
      const word = Documentation.gettext(text);
      for (const button of document.querySelectorAll(selector)) {
        // Bootstrap's tooltip, once made, keeps the title in data-bs-original-title
        const attribute = button.hasAttribute("data-bs-original-title") ? "data-bs-original-title" : "title";
        button.setAttribute(attribute, word);
        button.setAttribute("aria-label", word);
      }
    }
    const nav = document.querySelector('nav.bd-docs-nav[aria-label="Main"]');
    if (nav) nav.setAttribute("aria-label", Documentation.gettext("Main"));
  }

  document.addEventListener("DOMContentLoaded", () => {
    languageMenu();
    themeWords();
    // after sphinx-design's own DOMContentLoaded handler, which restores the stored choice
    setTimeout(showSelected, 0);
    document.addEventListener("change", (event) => {
      if (event.target instanceof HTMLInputElement && event.target.closest(".sd-tab-set")) showSelected();
    });
  });
})();
