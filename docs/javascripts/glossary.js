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
