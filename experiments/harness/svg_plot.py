"""Line plots as SVG documents, without dependencies (the harness's warm-up plot)."""
import math

SVG_COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]


def svg_line_plot(series, title, xlabel, ylabel, width=860, height=480):
    """A line plot with a log-scale y axis, as an SVG document (a string; plain formatting, no
    dependencies). series: [(label, [(x, y), ...])]; y <= 0 is drawn at the bottom of the axis;
    a series without points is left out."""
    from xml.sax.saxutils import escape
    series = [(label, pts) for label, pts in series if pts]
    left, right, top, bottom = 80, 150, 40, 60
    pw, ph = width - left - right, height - top - bottom
    xs = [x for _, pts in series for x, _ in pts]
    ys = [y for _, pts in series for _, y in pts if y > 0]
    xmin, xmax = (min(xs), max(xs)) if xs else (0, 1)
    if xmax <= xmin:
        xmax = xmin + 1
    lo = math.floor(math.log10(min(ys))) if ys else 0
    hi = math.ceil(math.log10(max(ys))) if ys else 1
    if hi <= lo:
        hi = lo + 1

    def px(x):
        return left + (x - xmin) / (xmax - xmin) * pw

    def py(y):
        y = max(y, 10.0 ** lo)
        return top + (hi - math.log10(y)) / (hi - lo) * ph

    def num(v):
        if 1e-3 <= v < 1e4:
            return "%g" % v
        e = math.floor(math.log10(v) + 1e-9)
        return "%de%d" % (round(v / 10.0 ** e), e)

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
           'font-family="sans-serif" font-size="12">' % (width, height, width, height),
           '<title>%s</title>' % escape(title),
           '<rect x="0" y="0" width="%d" height="%d" fill="white"/>' % (width, height),
           '<text x="%.1f" y="22" text-anchor="middle" font-size="15">%s</text>'
           % (left + pw / 2.0, escape(title))]
    # y grid and ticks: every decade labelled, 2x and 5x as light lines (labelled when the
    # axis spans at most three decades).
    for k in range(lo, hi + 1):
        for mult in (1, 2, 5):
            v = mult * 10.0 ** k
            if v > 10.0 ** hi:
                break
            y = py(v)
            major = mult == 1
            out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="1"/>'
                       % (left, y, left + pw, y, "#cccccc" if major else "#eeeeee"))
            if major or hi - lo <= 3:
                out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="black"/>' % (left - 5, y, left, y))
                out.append('<text x="%d" y="%.1f" text-anchor="end">%s</text>' % (left - 8, y + 4, num(v)))
    # x ticks: a step of 1, 2 or 5 times a power of ten, at most 10 intervals.
    span = xmax - xmin
    step = 1.0
    for e in range(0, 12):
        cand = [m * 10.0 ** e for m in (1, 2, 5) if span / (m * 10.0 ** e) <= 10]
        if cand:
            step = cand[0]
            break
    t = math.ceil(xmin / step) * step
    while t <= xmax + 1e-9:
        x = px(t)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eeeeee"/>' % (x, top, x, top + ph))
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>' % (x, top + ph, x, top + ph + 5))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (x, top + ph + 18, "%g" % t))
        t += step
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="black"/>' % (left, top, pw, ph))
    out.append('<text x="%.1f" y="%d" text-anchor="middle">%s</text>' % (left + pw / 2.0, height - 15, escape(xlabel)))
    out.append('<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">%s</text>'
               % (top + ph / 2.0, top + ph / 2.0, escape(ylabel)))
    # One polyline per series, then the legend to the right of the plot.
    for i, (label, pts) in enumerate(series):
        color = SVG_COLORS[i % len(SVG_COLORS)]
        coords = " ".join("%.1f,%.1f" % (px(x), py(y)) for x, y in pts)
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>' % (color, coords))
        ly = top + 10 + 20 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>'
                   % (left + pw + 12, ly, left + pw + 36, ly, color))
        out.append('<text x="%d" y="%d">%s</text>' % (left + pw + 42, ly + 4, escape(label)))
    if not series:
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle">no data</text>' % (left + pw / 2.0, top + ph / 2.0))
    out.append('</svg>')
    return "\n".join(out) + "\n"
