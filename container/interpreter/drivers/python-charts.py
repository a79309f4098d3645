"""Charts as data: a matplotlib figure's structure, read from its artists, for the result's `chart`.

The Python driver loads this module the first time a cell shows a figure (it comes inline, like the
driver, so nothing is looked up on disk in a sandbox) and calls `figure_chart(figure)` after the
figure's PNG is drawn, so tick labels are those of the image. The shape is protocol/code-chart.ts.

Each axes is read for what it holds, not guessed from its first artist: Line2D (lines, marker-only
lines as scatter, errorbar lines), PathCollection (scatter), PolyCollection (fill_between,
stackplot), BarContainer (bar, barh, hist; stacked through each bar's base), Wedge (pie), and a
boxplot's lines or patches (read by their geometry: box, whiskers, caps, median, fliers, mean).
Reference lines (axhline, axvline, grids: not in data coordinates) and text are left out. Anything
else (images, meshes, bars and lines in one axes) makes the axes an `unknown` chart that says why.
Any exception is the same: a chart of type unknown, never a broken cell.
"""
import math
import re
import warnings

from matplotlib import category as _category
from matplotlib import dates as _dates
from matplotlib.collections import LineCollection, PathCollection, PolyCollection
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Wedge
from matplotlib.ticker import FixedLocator

# Points in one figure's chart past which the chart is not sent: the PNG stands alone. A chart is
# JSON inside a result, and a million-point line would cost more to send than to look at.
MAX_POINTS = 200_000

SCALES = {"linear", "log", "symlog", "logit", "asinh", "function", "functionlog"}
UNIT_IN_LABEL = re.compile(r"\s\((.+?)\)|\[(.+?)\]")
NO_LINE = {"None", "none", "", " "}
# What an unlabelled element of each kind is called, numbered from 1 within its chart.
UNLABELLED = {"line": "Line", "scatter": "Series", "area": "Area"}


class Unmapped(Exception):
    """The axes holds something no chart type carries; the message says what."""


def figure_chart(figure):
    """The figure's chart (a dict), or None for a figure without axes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return _figure_chart(figure)
        except Exception as error:
            return unknown(_suptitle(figure), f"reading the figure failed: {type(error).__name__}: {error}")


def unknown(title, reason):
    return {"type": "unknown", "title": title, "elements": [], "reason": reason}


def _figure_chart(figure):
    axes = [ax for ax in figure.get_axes() if not _is_colorbar(ax)]
    budget = _Budget()
    suptitle = _suptitle(figure)
    if not axes:
        return None
    if len(axes) == 1:
        chart = axes_chart(axes[0], budget)
        if chart["title"] is None:
            chart["title"] = suptitle
        return chart
    return {"type": "superchart", "title": suptitle, "elements": [axes_chart(ax, budget) for ax in axes]}


def axes_chart(ax, budget):
    title = _title(ax)
    try:
        return _Reading(ax, budget).chart(title)
    except Unmapped as why:
        return unknown(title, str(why))
    except Exception as error:
        return unknown(title, f"reading the axes failed: {type(error).__name__}: {error}")


class _Budget:
    """Counts the points of a figure's chart against MAX_POINTS."""

    def __init__(self):
        self.points = 0

    def take(self, count):
        self.points += count
        if self.points > MAX_POINTS:
            raise Unmapped(f"more than {MAX_POINTS} points: too many to send as chart data")


# ── one axes ────────────────────────────────────────────────────────────────


class _Reading:
    def __init__(self, ax, budget):
        self.ax = ax
        self.budget = budget
        self.used = set()  # ids of artists accounted for
        self.x = _AxisValues(ax, ax.xaxis, ax.get_xscale())
        self.y = _AxisValues(ax, ax.yaxis, ax.get_yscale())

    def chart(self, title):
        ax = self.ax
        if getattr(ax, "name", "rectilinear") != "rectilinear":
            raise Unmapped(f"{ax.name} axes are not charted")
        if ax.images:
            raise Unmapped("images (imshow, matshow) are not charted")
        wedges = [patch for patch in ax.patches if isinstance(patch, Wedge)]
        if wedges:
            return self._pie(title, wedges)
        boxes = _BoxReading(self).boxes()
        if boxes is not None:
            orientation, elements = boxes
            self._check_all_used()
            return {"type": "box_and_whisker", "title": title, **self._axes_fields(), "orientation": orientation, "elements": elements}
        bars, orientation = self._bars()
        points = self._points()
        self._check_all_used()
        if bars and points:
            raise Unmapped("bars and lines or points in one axes are not charted together")
        if bars:
            return {"type": "bar", "title": title, **self._axes_fields(), "orientation": orientation, "elements": bars}
        if not points:
            raise Unmapped("the axes has no data")
        kind = "scatter" if all(element["kind"] == "scatter" for element in points) else "line"
        return {"type": kind, "title": title, **self._axes_fields(), "elements": points}

    def _axes_fields(self):
        fields = {}
        for name, axis, values in (("x", self.ax.xaxis, self.x), ("y", self.ax.yaxis, self.y)):
            label = _text(axis.get_label_text())
            fields[f"{name}_label"] = label
            unit = _unit(label)
            if unit:
                fields[f"{name}_unit"] = unit
            fields[f"{name}_scale"] = values.scale
            ticks, labels = _ticks(axis)
            fields[f"{name}_ticks"] = [values.value(tick) for tick in ticks]
            fields[f"{name}_tick_labels"] = labels
        return fields

    def _check_all_used(self):
        """Every data artist must be in the chart; what is not makes the axes unknown."""
        left = []
        for line in self.ax.lines:
            if id(line) not in self.used and _is_data(self.ax, line) and len(line.get_xydata()):
                left.append("a line")
        for collection in self.ax.collections:
            if id(collection) not in self.used:
                left.append(type(collection).__name__)
        for patch in self.ax.patches:
            if id(patch) not in self.used:
                left.append(type(patch).__name__)
        if left:
            raise Unmapped("the axes also holds " + ", ".join(sorted(set(left))) + ", which no chart type carries")

    # pie

    def _pie(self, title, wedges):
        if len(wedges) != len(self.ax.patches) or any(_is_data(self.ax, line) for line in self.ax.lines) or self.ax.collections:
            raise Unmapped("a pie with other data in the same axes is not charted")
        elements = []
        for number, wedge in enumerate(wedges, 1):
            angle = abs(float(wedge.theta2) - float(wedge.theta1))
            elements.append(
                {
                    "label": _own_label(wedge.get_label()) or f"Slice {number}",
                    "angle": round(angle, 6),
                    "fraction": round(angle / 360.0, 9),
                    "radius": float(wedge.r),
                }
            )
        self.budget.take(len(elements))
        return {"type": "pie", "title": title, "elements": elements}

    # bars

    def _bars(self):
        elements = []
        orientations = set()
        groups = [container for container in self.ax.containers if isinstance(container, BarContainer)]
        for number, container in enumerate(groups, 1):
            group = _own_label(container.get_label()) or f"Group {number}"
            orientation = getattr(container, "orientation", None) or _bar_orientation(container)
            orientations.add(orientation)
            errors = self._bar_errors(container, orientation)
            for index, rect in enumerate(container.patches):
                self.used.add(id(rect))
                if orientation == "vertical":
                    start, extent, base, length, positions = rect.get_x(), rect.get_width(), rect.get_y(), rect.get_height(), self.x
                else:
                    start, extent, base, length, positions = rect.get_y(), rect.get_height(), rect.get_x(), rect.get_width(), self.y
                center = float(start) + float(extent) / 2
                element = {
                    "label": positions.label(center),
                    "group": group,
                    "value": _number(length) or 0.0,
                    "position": positions.value(center),
                    "width": abs(float(extent)),
                    "base": _number(base) or 0.0,
                }
                if errors and index < len(errors) and errors[index] is not None:
                    element["error"] = errors[index]
                elements.append(element)
            self.budget.take(len(container.patches))
        if len(orientations) > 1:
            raise Unmapped("vertical and horizontal bars in one axes are not charted")
        return elements, (orientations.pop() if orientations else "vertical")

    def _bar_errors(self, container, orientation):
        errorbar = getattr(container, "errorbar", None)
        if errorbar is None:
            return None
        self._use_errorbar_parts(errorbar)
        _, _, collections = errorbar.lines
        along = 1 if orientation == "vertical" else 0
        for collection in collections:
            segments = collection.get_segments()
            if segments and all(len(segment) == 2 and _same(segment[0][1 - along], segment[1][1 - along]) for segment in segments):
                return [_range(segment[0][along], segment[1][along]) for segment in segments]
        return None

    # lines, scatter, areas

    def _points(self):
        elements = []
        errorbars = {}
        for container in self.ax.containers:
            if isinstance(container, ErrorbarContainer) and container.lines[0] is not None:
                errorbars[id(container.lines[0])] = container
        counts = {"line": 0, "scatter": 0, "area": 0}
        for line in self.ax.lines:
            if id(line) in self.used or not _is_data(self.ax, line):
                continue
            self.used.add(id(line))
            xy = line.get_xydata()
            self.budget.take(len(xy))
            kind = "scatter" if line.get_linestyle() in NO_LINE and line.get_marker() not in (None, *NO_LINE) else "line"
            container = errorbars.get(id(line))
            label = line.get_label() if container is None else (_own_label(line.get_label()) or container.get_label())  # errorbar's label is its container's
            element = {"kind": kind, "label": self._label(label, kind, counts), "points": self._pairs(xy)}
            if container is not None:
                self._use_errorbar_parts(container)
                element.update(self._point_errors(container, xy))
            elements.append(element)
        for collection in self.ax.collections:
            if id(collection) in self.used:
                continue
            if isinstance(collection, PathCollection):
                self.used.add(id(collection))
                offsets = collection.get_offsets()
                self.budget.take(len(offsets))
                elements.append({"kind": "scatter", "label": self._label(collection.get_label(), "scatter", counts), "points": self._pairs(offsets)})
            elif isinstance(collection, PolyCollection):
                areas = [_area(path.vertices, path.codes) for path in collection.get_paths()]
                if not areas or any(area is None for area in areas):
                    continue  # not a fill between two curves along x (fill_betweenx, violins): left for the unknown check
                self.used.add(id(collection))
                label = self._label(collection.get_label(), "area", counts)
                for upper, lower in areas:
                    self.budget.take(len(upper) + len(lower))
                    elements.append({"kind": "area", "label": label, "points": self._pairs(upper), "baseline": self._pairs(lower)})
        return elements

    def _use_errorbar_parts(self, container):
        _, caps, collections = container.lines
        for part in (*caps, *collections):
            self.used.add(id(part))

    def _point_errors(self, container, xy):
        """errorbar's x and y error bars, per point, from its LineCollections (x's first, as drawn)."""
        found = {}
        _, _, collections = container.lines
        for collection in collections:
            if not isinstance(collection, LineCollection):
                continue
            segments = collection.get_segments()
            if len(segments) != len(xy):
                continue
            if container.has_yerr and "y_errors" not in found and all(_same(s[0][0], s[1][0]) for s in segments):
                found["y_errors"] = [_range(s[0][1], s[1][1]) for s in segments]
            elif container.has_xerr and "x_errors" not in found and all(_same(s[0][1], s[1][1]) for s in segments):
                found["x_errors"] = [_range(s[0][0], s[1][0]) for s in segments]
        return found

    def _pairs(self, xy):
        x_value, y_value = self.x.value, self.y.value
        return [[x_value(x), y_value(y)] for x, y in _rows(xy)]

    @staticmethod
    def _label(label, kind, counts):
        counts[kind] += 1
        return _own_label(label) or f"{UNLABELLED[kind]} {counts[kind]}"


# ── box plots, from their lines ─────────────────────────────────────────────


class _BoxReading:
    """A boxplot's parts, found by geometry: each box is a closed rectangle (a Line2D, or a
    PathPatch with patch_artist), with a whisker from each end along its centre, caps across the
    whisker ends, a median across the box, and fliers (and a mean marker) on its centre line."""

    def __init__(self, reading):
        self.reading = reading
        self.ax = reading.ax

    def boxes(self):
        outlines = []
        for artist in [*self.ax.lines, *self.ax.patches]:
            outline = _box_outline(artist)
            if outline is not None:
                outlines.append((artist, outline))
        if not outlines:
            return None
        for orientation in ("vertical", "horizontal"):
            read = self._read(outlines, orientation)
            if read is not None:
                return orientation, read
        return None

    def _read(self, outlines, orientation):
        flip = orientation == "horizontal"
        lines = [(line, _oriented(line.get_xydata(), flip)) for line in self.ax.lines if _is_data(self.ax, line) and len(line.get_xydata())]
        used = set()
        elements = []
        positions = self.reading.y if flip else self.reading.x
        for box, outline in outlines:
            bounds = _box_bounds(outline, flip)
            if bounds is None:
                return None
            p0, p1, q1, q3 = bounds
            center = (p0 + p1) / 2
            lower = upper = None
            for line, xy in lines:
                if id(line) in used or len(xy) != 2 or not (_same(xy[0][0], center) and _same(xy[1][0], center)):
                    continue
                if lower is None and _same(xy[0][1], q1) and xy[1][1] <= q1:
                    lower = (line, float(xy[1][1]))
                elif upper is None and _same(xy[0][1], q3) and xy[1][1] >= q3:
                    upper = (line, float(xy[1][1]))
            if lower is None or upper is None:
                return None
            low, high = lower[1], upper[1]
            used.update({id(box), id(lower[0]), id(upper[0])})
            across = [
                (line, xy) for line, xy in lines
                if id(line) not in used and len(xy) == 2 and _same(xy[0][1], xy[1][1])
                and _same((xy[0][0] + xy[1][0]) / 2, center) and abs(xy[1][0] - xy[0][0]) <= (p1 - p0) * (1 + 1e-9)
            ]
            inside = [(line, xy) for line, xy in across if q1 - 1e-12 <= xy[0][1] <= q3 + 1e-12]
            full = [(line, xy) for line, xy in inside if _same(abs(xy[1][0] - xy[0][0]), p1 - p0)]
            median_line = (full or [item for item in inside if not (_same(item[1][0][1], low) or _same(item[1][0][1], high))] or inside or [None])[0]
            if median_line is None:
                return None
            used.add(id(median_line[0]))
            element = {
                "label": positions.label(center),
                "position": float(center),
                "min": low,
                "first_quartile": float(q1),
                "median": float(median_line[1][0][1]),
                "third_quartile": float(q3),
                "max": high,
                "outliers": [],
            }
            for line, xy in across:
                if id(line) in used:
                    continue
                value = xy[0][1]
                if _same(value, low) or _same(value, high):
                    used.add(id(line))  # a cap
                elif q1 <= value <= q3 and "mean" not in element:
                    used.add(id(line))  # meanline=True
                    element["mean"] = float(value)
            # Marker-only lines on the box's centre: bxp draws the mean (showmeans) before the fliers.
            markers = [
                (line, xy) for line, xy in lines
                if id(line) not in used and len(xy) > 0 and line.get_linestyle() in NO_LINE and all(_same(p, center) for p, _ in xy)
            ]
            if len(markers) > 2:
                return None
            if len(markers) == 2 or (len(markers) == 1 and len(markers[0][1]) == 1 and low <= markers[0][1][0][1] <= high and "mean" not in element):
                element["mean"] = float(markers[0][1][0][1])
                used.add(id(markers.pop(0)[0]))
            for line, xy in markers:
                element["outliers"] = [float(v) for _, v in xy if math.isfinite(v)]
                used.add(id(line))
            elements.append(element)
        self.reading.budget.take(sum(5 + len(element["outliers"]) for element in elements))
        self.reading.used.update(used)
        return sorted(elements, key=lambda element: element["position"])


def _box_outline(artist):
    """A boxplot box's outline points: a closed path of 5 (plain) or 11 (notched) points, as bxp
    draws them; None for anything else."""
    if isinstance(artist, Line2D):
        xy = artist.get_xydata()
    elif isinstance(artist, PathPatch):
        xy = artist.get_path().vertices
    else:
        return None
    rows = [(float(x), float(y)) for x, y in _rows(xy)]
    if len(rows) in (6, 12) and rows[-1] == rows[0]:
        rows = rows[:-1]  # a patch's path repeats its first point to close
    if len(rows) not in (5, 11) or not all(math.isfinite(v) for row in rows for v in row):
        return None
    return rows


def _box_bounds(outline, flip):
    """(low end, high end) on the position axis and (q1, q3) of a box outline, or None when the
    outline is not a box in this orientation: plain boxes go q1 q1 q3 q3 q1, notched ones
    q1 q1 cilo med cihi q3 q3 cihi med cilo q1."""
    rows = _oriented(outline, flip)
    values = [v for _, v in rows]
    top = 2 if len(rows) == 5 else 5
    if not (_same(values[0], values[1]) and _same(values[0], values[-1]) and _same(values[top], values[top + 1])):
        return None
    positions = [p for p, _ in rows]
    q1, q3 = sorted((values[0], values[top]))
    low, high = min(positions), max(positions)
    return (low, high, q1, q3) if low < high else None


def _oriented(xy, flip):
    """Rows as (position, value): (x, y) for vertical boxes, (y, x) for horizontal."""
    return [(float(b), float(a)) if flip else (float(a), float(b)) for a, b in _rows(xy)]


# ── axes values: numbers, dates, categories ─────────────────────────────────


class _AxisValues:
    """Turns an axis's internal numbers into what the chart carries: ISO times on a date axis,
    category names on a categorical one, numbers elsewhere; the scale it reports."""

    def __init__(self, ax, axis, scale):
        converter = axis.get_converter() if hasattr(axis, "get_converter") else getattr(axis, "converter", None)
        self.categories = None
        self.dates = False
        # pandas draws a time series on period ordinals of the axes' frequency, with its own locator.
        self.period = getattr(ax, "freq", None) if type(axis.get_major_formatter()).__name__ == "TimeSeries_DateFormatter" else None
        if self.period is not None:
            self.scale = "datetime"
        elif isinstance(converter, _category.StrCategoryConverter) and axis.units is not None:
            self.categories = {float(number): str(name) for name, number in axis.units._mapping.items()}
            self.scale = "categorical"
        elif _is_date_axis(axis, converter):
            self.dates = True
            self.scale = "datetime"
        else:
            self.scale = scale if scale in SCALES else "unknown"
        self.axis = axis

    def value(self, number):
        number = _number(number)
        if number is None:
            return None
        if self.dates:
            try:
                return _dates.num2date(number).isoformat()
            except (ValueError, OverflowError):
                return None
        if self.period is not None:
            try:
                import pandas

                return pandas.Period(ordinal=int(round(number)), freq=self.period).to_timestamp().isoformat()
            except Exception:
                return None
        if self.categories is not None and number in self.categories:
            return self.categories[number]
        return number

    def label(self, number):
        """A bar's or box's name: its category, its tick label, else its position as text."""
        value = self.value(number)
        if isinstance(value, str):
            return value
        ticks, labels = _ticks(self.axis)
        named = [(tick, label) for tick, label in zip(ticks, labels) if label]
        for tick, label in named:
            if _same(tick, number):
                return label
        if named and isinstance(self.axis.get_major_locator(), FixedLocator):
            # Ticks named by hand (set_xticks(x, names), pandas' bar plots): a grouped bar, off its
            # tick by its offset in the group, is named by the nearest.
            return min(named, key=lambda item: abs(item[0] - number))[1]
        return "" if value is None else f"{value:g}"


def _is_date_axis(axis, converter):
    if converter is not None and "Date" in type(converter).__name__:
        return True
    return isinstance(axis.get_major_locator(), _dates.DateLocator)


def _ticks(axis):
    """The major ticks inside the view, and their labels as drawn (the figure was drawn just before)."""
    update = getattr(axis, "_update_ticks", None)  # the drawn ticks; matplotlib has no public reader of them
    if update is not None:
        drawn = [tick for tick in update() if tick in axis.majorTicks]
        pairs = [(tick.get_loc(), tick.label1.get_text() or tick.label2.get_text()) for tick in drawn]
    else:
        pairs = [(tick, text.get_text()) for tick, text in zip(axis.get_majorticklocs(), axis.get_majorticklabels())]
    ticks, labels = [], []
    for tick, label in pairs:
        tick = _number(tick)
        if tick is not None:
            ticks.append(float(f"{tick:.12g}"))  # a locator's steps carry float noise (3.0000000000000004)
            labels.append(_plain(label))
    return ticks, labels


MATHTEXT_DEFAULT = re.compile(r"\\mathdefault\{(.*)\}")


def _plain(label):
    """A tick label without the mathtext matplotlib wraps some in ($\\mathdefault{10^{2}}$ → 10^{2})."""
    if len(label) > 1 and label.startswith("$") and label.endswith("$"):
        inner = label[1:-1]
        match = MATHTEXT_DEFAULT.fullmatch(inner)
        return match.group(1) if match else inner
    return label


# ── small readers ───────────────────────────────────────────────────────────


def _area(vertices, codes):
    """fill_between's polygon, as (upper edge, lower edge) along x, or None when it is not one:
    start (x0, y2), the upper edge, end (xn, y2), the lower edge backwards, and a closing point."""
    rows = [(float(x), float(y)) for x, y in _rows(vertices)]
    if codes is not None and len(codes) and int(codes[-1]) == 79:  # CLOSEPOLY
        rows = rows[:-1]
    if len(rows) < 4 or len(rows) % 2:
        return None
    n = (len(rows) - 2) // 2
    upper = rows[1 : n + 1]
    lower = list(reversed(rows[n + 2 :]))
    if len(lower) != n or not all(_same(a[0], b[0]) for a, b in zip(upper, lower)):
        return None
    finite = [(a[1], b[1]) for a, b in zip(upper, lower) if math.isfinite(a[1]) and math.isfinite(b[1])]
    if sum(a for a, _ in finite) < sum(b for _, b in finite):
        upper, lower = lower, upper  # fill_between(x, low, high), as stackplot draws its layers
    return upper, lower


def _is_data(ax, line):
    """A line in data coordinates: not axhline/axvline/a grid, whose transforms mix in axes coordinates."""
    return line.get_transform() == ax.transData


def _is_colorbar(ax):
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _bar_orientation(container):
    patches = container.patches
    widths = {round(float(patch.get_width()), 9) for patch in patches}
    return "vertical" if len(widths) <= 1 else "horizontal"


def _title(ax):
    for loc in ("center", "left", "right"):
        title = _text(ax.get_title(loc))
        if title:
            return title
    return None


def _unit(label):
    if not label:
        return None
    match = UNIT_IN_LABEL.search(label)
    return (match.group(1) or match.group(2)) if match else None


def _own_label(label):
    """A label the user gave; matplotlib's own (_child3, _container0, _nolegend_) start with '_'."""
    label = "" if label is None else str(label)
    return "" if label.startswith("_") else label


def _text(text):
    text = "" if text is None else str(text)
    return text if text.strip() else None


def _suptitle(figure):
    """The figure's suptitle (get_suptitle is matplotlib 3.8's; older ones keep the Text itself)."""
    try:
        if hasattr(figure, "get_suptitle"):
            return _text(figure.get_suptitle())
        suptitle = getattr(figure, "_suptitle", None)
        return _text(suptitle.get_text()) if suptitle is not None else None
    except Exception:
        return None


def _rows(array):
    return array.tolist() if hasattr(array, "tolist") else list(array)


def _number(value):
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _range(a, b):
    a, b = _number(a), _number(b)
    if a is None or b is None:
        return None
    return [min(a, b), max(a, b)]


def _same(a, b):
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
