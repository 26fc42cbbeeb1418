"""Accessibility and legibility checks on a page in a real browser, for any page's test.

Each check takes a Playwright page (tab) that has finished drawing (`settle`) and returns a list
of `Finding`s, empty when the page passes: axe-core's WCAG 2.1 A/AA rules (`axe_findings`), the
contrast and the size of the text inside plotly charts and the app's SVG drawings, which axe
can't judge (`chart_text_contrast`, `chart_text_sizes`), and text cut off by its box
(`cut_off_text`). `legibility_findings` runs them all, in every tab of the page. A finding names
the element and the numbers, so whoever breaks a page can find and fix it.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, replace

from tests.harness import wait_for_app

WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]  # WCAG 2.0 and 2.1, levels A and AA
MIN_CONTRAST = 4.5  # WCAG 1.4.3 (AA) for text under 18.66 px bold / 24 px: chart text is that
MIN_CHART_PX = 11  # chart text, normal view
MIN_PROJECTOR_CHART_PX = 16  # chart text in projector mode: legible from the back of a room


@dataclass(frozen=True)
class Finding:
    """One thing wrong on a page: which check, which rule, which element, and the numbers."""

    check: str  # "axe", "chart contrast", "chart size", "cut off"
    rule: str  # axe's rule id, or what the check measured
    target: str  # a selector or a description of the element
    detail: str  # the numbers: a contrast ratio, a size, the text

    def __str__(self) -> str:
        return f"[{self.check}] {self.rule} at {self.target}: {self.detail}"


def report(findings: list[Finding]) -> str:
    """The findings one a line, for an assertion message."""
    return "\n".join(str(f) for f in findings)


# --- waiting until the page is drawn ---------------------------------------------------------------

CHARTS_DRAWN_JS = """() => [...document.querySelectorAll('.stPlotlyChart')]
  .every((chart) => chart.querySelector('svg.main-svg text, svg.main-svg .plot'))"""


def settle(tab, heading: str | None = None, title: bool = True) -> None:
    """Wait until the page's script has stopped running, its title shows (a tour's stop in
    projector mode has none: `title` False) and every plotly chart on it has drawn its SVG; then
    until the fonts are loaded."""
    wait_for_app(tab, heading=heading, title=title)
    tab.wait_for_function(CHARTS_DRAWN_JS)
    tab.evaluate("() => document.fonts.ready.then(() => true)")
    tab.wait_for_function("() => !document.querySelector('[data-testid=\"stSkeleton\"]')")


MAIN = '[data-testid="stMainBlockContainer"]'


def panels(tab) -> Iterator[str]:
    """Open every expander of the page's main block, then show each of its tabs in turn, waiting
    each time until the page has drawn; yields what is showing ("the page", or "tab <name>")."""
    closed = tab.locator(f"{MAIN} details:not([open]) > summary")
    for _ in range(closed.count()):
        closed.first.click()  # an expander may rerun the page (on_change): settle before the next
        settle(tab)
    tabs = tab.locator(f'{MAIN} [role="tab"]')
    shown = [i for i, t in enumerate(tabs.all()) if t.is_visible()]
    if not shown:
        yield "the page"
        return
    first = next((i for i in shown if tabs.nth(i).get_attribute("aria-selected") == "true"), shown[0])
    for index in [first, *(i for i in shown if i != first)]:
        if index != first:
            tabs.nth(index).click()
            settle(tab)
        yield f"tab {tabs.nth(index).inner_text().strip()}"


def legibility_findings(tab, projector: bool, cut_off: bool = True, every_tab: bool = True) -> list[Finding]:
    """Every check on a drawn page, each finding once: axe's WCAG 2.1 AA, chart text's contrast
    and size (16 px in projector mode, else 11), and (with `cut_off`) text cut off by its box.
    With `every_tab`, in each of the page's tabs with its expanders open; else as it shows."""
    seen: dict[Finding, str] = {}  # in order, without the repeats of what every tab shows
    for n, panel in enumerate(panels(tab) if every_tab else ["the page"]):
        # axe reads the whole page once; after that only the tab now shown (Streamlit draws the
        # shown tab's panel alone), as the rest is what it read already: a second a tab, in CI
        found = axe_findings(tab, within=TAB_PANEL if n else None) + chart_text_contrast(tab)
        found += chart_text_sizes(tab, MIN_PROJECTOR_CHART_PX if projector else MIN_CHART_PX)
        found += cut_off_text(tab) if cut_off else []
        for finding in found:
            seen.setdefault(finding, panel)
    return [replace(f, target=f"{f.target} (first seen in {panel})") for f, panel in seen.items()]


# --- axe-core ---------------------------------------------------------------------------------------


TAB_PANEL = '[data-testid="stTabPanel"]'


def axe_findings(tab, tags: list[str] | None = None, within: str | None = None) -> list[Finding]:
    """axe-core's violations of the WCAG 2.0/2.1 A and AA rules, one finding per element; with
    `within`, of the elements inside what that selector picks (and none of the page's own rules)."""
    from axe_playwright_python.sync_playwright import Axe

    options = {"runOnly": {"type": "tag", "values": tags or WCAG_AA}}
    results = Axe().run(tab, context={"include": [[within]]} if within else None, options=options)
    findings = []
    for rule in results.response["violations"]:
        for node in rule["nodes"]:
            target = " >>> ".join(str(t) for t in node["target"])
            findings.append(Finding("axe", rule["id"], target, _axe_detail(rule, node)))
    return findings


def _axe_detail(rule: dict, node: dict) -> str:
    for check in node.get("any", []) + node.get("all", []) + node.get("none", []):
        data = check.get("data")
        if isinstance(data, dict) and "contrastRatio" in data:
            return (
                f"contrast {data['contrastRatio']}:1 < {data.get('expectedContrastRatio')} "
                f"({data.get('fgColor')} on {data.get('bgColor')}, {data.get('fontSize')}, "
                f"{data.get('fontWeight')}) {node['html'][:120]}"
            )
    summary = " ".join((node.get("failureSummary") or rule["help"]).split())
    return f"{node['html'][:160]} -- {summary[:200]}"


# --- text in charts -----------------------------------------------------------------------------

# Every visible text of a chart: its text, where it is (the chart's key, the class of its group),
# its fill and opacity, its box relative to the chart's, and its rendered size (the font size
# times the SVG's scale on screen).
CHART_TEXTS_JS = """(chart) => {
  const rgba = (s) => { const m = s.match(/[\\d.]+/g) || [0, 0, 0, 0];
    return [+m[0], +m[1], +m[2], m.length > 3 ? +m[3] : 1]; };
  const key = [...chart.closest('[class*="st-key-"]')?.classList || []].find((c) => c.startsWith('st-key-'));
  const frame = chart.getBoundingClientRect();
  const out = [];
  for (const t of chart.querySelectorAll('text')) {
    const text = t.textContent.trim();
    const box = t.getBoundingClientRect();
    if (!text || box.width < 1 || box.height < 1
        || !t.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    const style = getComputedStyle(t);
    const fill = rgba(style.fill.startsWith('rgb') ? style.fill : 'rgb(0,0,0)');
    let alpha = fill[3] * parseFloat(style.fillOpacity);
    for (let e = t; e && e !== chart; e = e.parentElement) alpha *= parseFloat(getComputedStyle(e).opacity);
    const ctm = t.getScreenCTM();
    out.push({ kind: chart.matches('svg') ? 'drawing' : 'chart', key: key || '',
               label: (chart.getAttribute('aria-label') || '').slice(0, 40),
               group: t.closest('g[class]')?.getAttribute('class') || '',
               text: text.slice(0, 40), fill: [fill[0], fill[1], fill[2], alpha],
               box: [box.left - frame.left, box.top - frame.top, box.width, box.height],
               px: parseFloat(style.fontSize) * (ctm ? Math.hypot(ctm.a, ctm.b) : 1) });
  }
  return out;
}"""
CHARTS = '.stPlotlyChart, svg[role="img"]'  # plotly's charts; the app's own SVG drawings (diagrams)
HIDE_CHART_TEXT = ":is(.stPlotlyChart, svg[role='img']) text { visibility: hidden !important; }"


def chart_texts(tab, backgrounds: bool = True) -> list[dict]:
    """Every visible text in the page's charts (plotly's, and the app's SVG drawings with
    role="img"), measured (CHART_TEXTS_JS); with
    `backgrounds`, each with "bg": the colour drawn behind it, read from a screenshot of its
    chart with the texts hidden (the page behind a tick, a heatmap's cell behind its number)."""
    found = []
    for index, chart in enumerate(tab.locator(CHARTS).all()):
        if not chart.is_visible():  # in a tab not open, an expander closed
            continue
        if backgrounds:
            chart.scroll_into_view_if_needed()
        texts = [t | {"chart": index} for t in chart.evaluate(CHART_TEXTS_JS)]
        if backgrounds and texts:
            hide = tab.add_style_tag(content=HIDE_CHART_TEXT)
            image = _image(chart.screenshot(animations="disabled"))
            hide.evaluate("(style) => style.remove()")
            for t in texts:
                t["bg"] = _behind(image, t["box"])
        found += texts
    return found


def _image(png: bytes):
    from PIL import Image

    return Image.open(io.BytesIO(png)).convert("RGB")


def _behind(image, box: list[float]) -> list[float]:
    """The median colour of the image within `box` (x, y, width, height, in CSS px)."""
    from PIL import ImageStat

    x, y, w, h = box
    left, top = max(0, int(x)), max(0, int(y))
    right, bottom = min(image.width, int(x + w + 0.999)), min(image.height, int(y + h + 0.999))
    if right <= left or bottom <= top:
        return [255.0, 255.0, 255.0]
    return ImageStat.Stat(image.crop((left, top, right, bottom))).median


def luminance(rgb) -> float:
    """WCAG's relative luminance of an sRGB colour given as 0-255 numbers."""

    def linear(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    """WCAG's contrast ratio of two sRGB colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def hex_colour(rgb) -> str:
    return "#" + "".join(f"{round(c):02x}" for c in rgb[:3])


def _where(t: dict) -> str:
    chart = f"{t['kind']} {t['chart']}" + (f' "{t["label"]}…"' if t["label"] else "")
    chart += f" ({t['key']})" if t["key"] else ""
    return f"{chart}{' g.' + t['group'].split()[0] if t['group'] else ''} text {t['text']!r}"


def chart_text_contrast(tab, minimum: float = MIN_CONTRAST) -> list[Finding]:
    """Every chart text whose fill has less than `minimum` contrast with what is drawn behind it."""
    findings = []
    for t in chart_texts(tab):
        alpha = t["fill"][3]  # a translucent text is its colour mixed with what is behind it
        fill = [c * alpha + b * (1 - alpha) for c, b in zip(t["fill"][:3], t["bg"], strict=True)]
        ratio = contrast(fill, t["bg"])
        if ratio < minimum:
            detail = f"contrast {ratio:.2f}:1 < {minimum} ({hex_colour(fill)} on {hex_colour(t['bg'])})"
            findings.append(Finding("chart contrast", "text-contrast", _where(t), detail))
    return findings


def chart_text_sizes(tab, minimum_px: float) -> list[Finding]:
    """Every chart text drawn smaller than `minimum_px` on screen."""
    return [
        Finding("chart size", "text-size", _where(t), f"{t['px']:.1f} px < {minimum_px} px")
        for t in chart_texts(tab, backgrounds=False)
        if t["px"] < minimum_px - 0.05
    ]


# --- text cut off -------------------------------------------------------------------------------------

# Every visible text node (shadow roots included) whose glyphs reach past an ancestor that
# clips them (overflow hidden or clip, which text-overflow: ellipsis needs): the text is cut off.
# A box that scrolls (a code block, a wide table) shows the rest on purpose and is not a finding;
# nor is text nobody sees: hidden, transparent, a screen reader's 1 px text, or outside the page.
# Labels of buttons, widgets and metrics that end in "…" were shortened by the app itself.
CUT_OFF_JS = """() => {
  const found = [];
  const label = (el) => {
    const id = el.closest('[data-testid]')?.getAttribute('data-testid') || '';
    const key = [...el.closest('[class*="st-key-"]')?.classList || []].find((c) => c.startsWith('st-key-'));
    return `${el.tagName.toLowerCase()}${id ? ` in ${id}` : ''}${key ? ` (${key})` : ''}`;
  };
  const up = (e) => e.parentElement || (e.getRootNode() instanceof ShadowRoot ? e.getRootNode().host : null);
  const visible = (el) => {
    if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1;
  };
  const pageWidth = document.documentElement.scrollWidth;
  const walk = (root) => {
    const texts = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = texts.nextNode(); node; node = texts.nextNode()) {
      const el = node.parentElement;
      const text = node.textContent.trim();
      if (!text || !el || el.closest('svg, script, style, noscript, .katex-mathml') || !visible(el)) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const rects = [...range.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
      if (!rects.length) continue;
      const left = Math.min(...rects.map((r) => r.left)), right = Math.max(...rects.map((r) => r.right));
      if (right < 0 || left > pageWidth) continue;  // parked off the page (a closed sidebar)
      for (let a = el; a; a = up(a)) {
        const style = getComputedStyle(a);
        if (['auto', 'scroll'].includes(style.overflowX)) break;  // it scrolls: the rest is reachable
        if (!['hidden', 'clip'].includes(style.overflowX)) continue;
        const box = a.getBoundingClientRect();
        const inner = box.left + a.clientLeft, outer = inner + a.clientWidth;
        const cut = Math.max(0, inner - left) + Math.max(0, right - outer);
        if (cut > 1 && a.clientWidth > 1) {
          found.push({ where: label(el), clip: label(a), text: text.slice(0, 60), cut: Math.round(cut) });
          break;
        }
      }
    }
    for (const el of root.querySelectorAll('*')) if (el.shadowRoot) walk(el.shadowRoot);
  };
  walk(document.body);
  const shortened = 'button, [data-testid="stWidgetLabel"], [data-testid="stMetricLabel"],'
    + '[data-testid="stMetricValue"], [role="tab"]';
  for (const el of document.querySelectorAll(shortened)) {
    const text = el.innerText.trim();
    if (visible(el) && /(…|\\.\\.\\.)$/.test(text)) found.push({ where: label(el), clip: 'the app',
      text: text.slice(-60), cut: 0 });
  }
  return found;
}"""


def cut_off_text(tab) -> list[Finding]:
    """Every visible text that its box cuts off, and every label shortened with "…"."""
    findings = []
    for f in tab.evaluate(CUT_OFF_JS):
        detail = f"{f['text']!r} " + (f"{f['cut']} px cut off by {f['clip']}" if f["cut"] else "shortened")
        findings.append(Finding("cut off", "text-overflow", f["where"], detail))
    return findings
