// A definition shown on hover or focus (Material's tooltips) can be dismissed with Escape
// without moving the pointer or the focus (WCAG 2.1, 1.4.13); it shows again on the next
// focus or hover. No page content reaches this file: it is the site's own, listed in
// extra_javascript.
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape") document.body.classList.add("glossary-tooltips-dismissed");
});
for (const type of ["focusin", "mouseover"]) {
  document.addEventListener(type, () => document.body.classList.remove("glossary-tooltips-dismissed"), true);
}

// Arrow keys walk the reading order: on a term page, Left and Right follow the links under
// "Continue reading" (the page works without this; the links are there for everyone). Only
// when nothing is focused and no key modifier is held, so a table scrolled sideways, a form
// field or the browser's own shortcuts keep their keys.
document.addEventListener("keydown", (event) => {
  if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
  if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey || event.defaultPrevented) return;
  const focused = document.activeElement;
  if (focused && focused !== document.body) return;
  const heading = document.getElementById("continue-reading");
  const list = heading && heading.nextElementSibling;
  if (!list) return;
  const want = event.key === "ArrowLeft" ? "Previous:" : "Next:";
  for (const item of list.querySelectorAll("li")) {
    const link = item.querySelector("a[href]");
    if (link && item.textContent.trim().startsWith(want)) {
      window.location.assign(link.href);
      return;
    }
  }
});
