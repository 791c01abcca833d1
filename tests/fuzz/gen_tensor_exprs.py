"""Tensor values and expressions of the fuzz generator's `tensors` profile
(gen_tensors.py writes the programs around them).

Each expression builder returns (text, TV or Scalar): the tensor's shape
(dims are constants or per-iteration symbols), dtype and a bound on its
magnitude, so that every program is valid, f16 never overflows, no NaN is
made and ints never wrap: elementwise chains with broadcasting (+ - * / **,
unary minus, comparisons, where, min/max, cast, every unary built-in, mixed
f32/f16/bf16/i32/i64/bool inputs), reductions with axis= and keepdim=,
softmax, layer_norm, rms_norm, matmul with epilogues, attention, sub-tensors,
slice and concat.
"""

import math

FLOATS = ("f32", "f16", "bf16")
INTS = ("i32", "i64")
# largest magnitude a value of each dtype may reach
LIM = {"f32": 3e4, "bf16": 3e4, "f16": 300.0, "i64": 1e9, "i32": 1e6, "bool": 1.0}


def is_float(dt):
    return dt in FLOATS


def promote(a, b):
    """Result dtype of a binary op on two tensors (spec section 7)."""
    if a == b:
        return a
    if a in FLOATS and b in FLOATS:
        return "f32"
    if a in FLOATS:
        return a
    if b in FLOATS:
        return b
    if "i64" in (a, b):
        return "i64"
    if "i32" in (a, b):
        return "i32"
    return "bool"


def promote_scalar(dt, sc):
    """Tensor of dtype dt with a Python scalar of kind sc ("int"/"float")."""
    if dt in FLOATS:
        return dt
    if sc == "float":
        return "f32"
    if dt == "bool":
        return "i64"
    return dt


class TV:
    """Static description of a tensor value: shape (tuple of dims: int
    constants or symbol names), dtype, bound on |element|."""

    def __init__(self, shape, dt, mag, fresh=True):
        self.shape = tuple(shape)
        self.dt = dt
        self.mag = float(mag)
        self.fresh = fresh   # made by an operation (not a second name of a variable)


class Scalar:
    def __init__(self, kind, mag):
        self.kind = kind     # "int" or "float"
        self.mag = float(mag)
        self.shape = ()
        self.dt = None


class TensorExprsMixin:
    # ------------------------------------------------------------ shapes
    def t_dmax(self, d):
        return d if isinstance(d, int) else self.t_syms[d][1]

    def t_dmin(self, d):
        return d if isinstance(d, int) else self.t_syms[d][0]

    def t_numel_max(self, shape):
        n = 1
        for d in shape:
            n *= self.t_dmax(d)
        return n

    def t_may_empty(self, shape):
        return any(self.t_dmin(d) == 0 for d in shape)

    @staticmethod
    def t_shape_str(shape):
        return "[%s]" % ", ".join(str(d) for d in shape)

    def t_shape_list(self, shape):
        """A shape list for a creation op; in a loop, some dims computed from
        the loop variable (the same value, not a constant of the trace)."""
        if self.t_i is None or self.r.random() < 0.6:
            return self.t_shape_str(shape)
        return "[%s]" % ", ".join("(%s + %s * 0)" % (d, self.t_i) if self.r.random() < 0.5 else str(d)
                                  for d in shape)

    @staticmethod
    def t_into(shape, S):
        """shape broadcasts to S without changing S."""
        if len(shape) > len(S):
            return False
        off = len(S) - len(shape)
        return all(d == 1 or d == S[off + k] for k, d in enumerate(shape))

    @staticmethod
    def t_bcast(a, b):
        n = max(len(a), len(b))
        a = (1,) * (n - len(a)) + tuple(a)
        b = (1,) * (n - len(b)) + tuple(b)
        out = []
        for x, y in zip(a, b):
            if x == y or y == 1:
                out.append(x)
            elif x == 1:
                out.append(y)
            else:
                return None
        return tuple(out)

    def t_sub_shape(self, S):
        """A random shape into S: some leading dims dropped, some dims 1."""
        k = len(S)
        if k and self.chance(0.3):
            k = self.r.randint(0, len(S))
        sub = list(S[len(S) - k:])
        for j in range(len(sub)):
            if self.chance(0.2):
                sub[j] = 1
        return tuple(sub)

    # ------------------------------------------------------------ literals
    def t_flit(self, lo=0.1, hi=3.0):
        v = self.pick([0.5, 0.25, 1.5, 2.0, 0.75, 3.0, 0.125, 1.0, 0.3, 0.1, 1.25, 2.5, 0.7])
        v = min(max(v, lo), hi)
        return v

    def t_fstr(self, v):
        s = repr(float(v))
        return "(%s)" % s if v < 0 else s

    def t_scalar(self, kind=None):
        """(expr, Scalar) of a Python scalar."""
        if kind == "int" or (kind is None and self.chance(0.25)):
            k = self.r.random()
            if k < 0.5:
                v = self.r.randint(-4, 5)
                return ("(%d)" % v if v < 0 else str(v)), Scalar("int", abs(v))
            if self.t_i is None:
                return str(self.r.randint(1, 5)), Scalar("int", 5)
            return "(%s %% %d)" % (self.t_i, self.r.randint(2, 7)), Scalar("int", 7)
        k = self.r.random()
        if k < 0.45 or not self.t_fsc:
            v = self.t_flit() * self.pick([1, 1, -1])
            return self.t_fstr(v), Scalar("float", abs(v))
        if k < 0.8:
            name, mag = self.pick(self.t_fsc)
            return name, Scalar("float", mag)
        return "(%s * 0.5 + 0.25)" % self.pick(self.t_fsc)[0], Scalar("float", 2.0)

    # ------------------------------------------------------------ leaves
    def t_rand_float_dt(self):
        return self.pick(["f32"] * 6 + ["f16", "f16", "bf16", "bf16"])

    def t_create(self, P, kind="float", dt=None):
        """A creation expression of exactly shape P."""
        sh = self.t_shape_list(P)
        nmax = max(1, self.t_numel_max(P))
        seed = self.pick([str(self.r.randint(0, 9)), "%s %% 3" % self.t_i if self.t_i else "1"])
        if kind == "bool":
            return "(rand(%s, seed=%s) > %s)" % (sh, seed, self.pick(["0.5", "0.25", "0.9"])), TV(P, "bool", 1)
        if kind == "int":
            dt = dt or self.pick(["i64", "i64", "i32"])
            k = self.r.random()
            dts = "" if dt == "i64" else ", dtype=%s" % dt
            if k < 0.3:
                v = self.r.randint(-5, 9)
                return "full(%s, %d, dtype=%s)" % (sh, v, dt), TV(P, dt, abs(v))
            if k < 0.6:
                m = self.r.randint(3, 11)
                n = "*".join(str(d) for d in P) or "1"
                return ("(reshape(arange(%s%s), %s) %% %d - %d)" % (n, dts, sh, m, m // 2),
                        TV(P, dt, m))
            if k < 0.8:
                return ("cast(randn(%s, seed=%s) * %s, %s)" % (sh, seed, self.pick(["3.0", "4.0", "10.0"]), dt),
                        TV(P, dt, 70))
            return "(ones(%s, dtype=%s) * %s)" % (sh, dt, self.t_scalar("int")[0]), TV(P, dt, 7)
        dt = dt or self.t_rand_float_dt()
        dts = "" if dt == "f32" else ", dtype=%s" % dt
        k = self.r.random()
        if k < 0.15:
            v = self.t_flit() * self.pick([1, -1])
            return "full(%s, %s%s)" % (sh, self.t_fstr(v), dts), TV(P, dt, abs(v))
        if k < 0.45:
            return "randn(%s, seed=%s%s)" % (sh, seed, dts), TV(P, dt, 7)
        if k < 0.6:
            return "rand(%s, seed=%s%s)" % (sh, seed, dts), TV(P, dt, 1)
        if k < 0.8:
            n = "*".join(str(d) for d in P) or "1"
            sc = 2.0 ** -max(0, math.ceil(math.log2(nmax / 4.0)))
            off = self.pick([0.0, -1.0, -2.0, 0.5])
            # half-precision aranges only up to 2048 (exact, finite); else made in f32 and cast
            half = dt != "f32" and nmax > 2048
            e = "reshape(arange(%s%s), %s) * %s" % (n, "" if half else dts, sh, repr(sc))
            if off:
                e = "%s - %s" % (e, repr(-off) if off < 0 else "(%s)" % repr(-off))
            if half:
                return "cast(%s, %s)" % (e, dt), TV(P, dt, nmax * sc + abs(off))
            return "(%s)" % e, TV(P, dt, nmax * sc + abs(off))
        name, mag = self.pick(self.t_fsc) if self.t_fsc else ("1.5", 1.5)
        return "(ones(%s%s) * %s)" % (sh, dts, name), TV(P, dt, max(mag, 1))

    def t_var_cands(self, S, kind):
        out = []
        for name, tv in self.t_vars.items():
            if not self.t_into(tv.shape, S):
                continue
            if kind == "float" and not is_float(tv.dt):
                continue
            if kind == "int" and tv.dt not in INTS:
                continue
            if kind == "bool" and tv.dt != "bool":
                continue
            out.append(name)
        return out

    def t_slice_leaf(self, S, kind):
        """slice(G, axis, a, b) or G[k] of a global whose result is into S."""
        cands = []
        for name, tv in self.t_vars.items():
            if (kind == "float") != is_float(tv.dt) or tv.dt == "bool":
                continue
            sh = tv.shape
            if any(not isinstance(d, int) for d in sh):
                continue
            # sub-tensor: G[k] of rank r+1
            if len(sh) >= 2 and sh[0] >= 1 and self.t_into(sh[1:], S):
                cands.append(("sub", name, tv))
            # slice along one axis down to a dim of S
            if len(sh) == len(S) and sh:
                for ax in range(len(sh)):
                    ok = all(sh[j] == S[j] or sh[j] == 1 for j in range(len(sh)) if j != ax)
                    d = S[ax]
                    if ok and self.t_dmax(d) <= sh[ax] and d != sh[ax]:
                        cands.append(("slice", name, tv, ax))
        if not cands:
            return None
        c = self.pick(cands)
        tv = c[2]
        if c[0] == "sub":
            idx = self.pick([str(self.r.randrange(tv.shape[0])), "(%s + %d) %% %d" % (
                self.t_i, self.r.randint(0, 5), tv.shape[0])])
            return "%s[%s]" % (c[1], idx), TV(tv.shape[1:], tv.dt, tv.mag)
        ax = c[3]
        d = S[ax]
        start = self.r.randint(0, tv.shape[ax] - self.t_dmax(d))
        stop = "%d" % (start + d) if isinstance(d, int) else ("%s + %d" % (d, start) if start else d)
        axs = str(ax) if self.chance(0.7) else str(ax - len(tv.shape))
        shape = list(tv.shape)
        shape[ax] = d
        return "slice(%s, %s, %d, %s)" % (c[1], axs, start, stop), TV(shape, tv.dt, tv.mag)

    def t_leaf(self, S, kind):
        if kind is None:
            kind = "float" if self.chance(0.8) else "int"
        k = self.r.random()
        if k < 0.5:
            vs = self.t_var_cands(S, kind)
            if vs:
                name = self.pick(vs)
                tv = self.t_vars[name]
                return name, TV(tv.shape, tv.dt, tv.mag, fresh=False)
        if k < 0.62 and kind in ("float", "int"):
            r = self.t_slice_leaf(S, kind)
            if r:
                return r
        if k < 0.75 and kind in ("float", "int"):
            return self.t_scalar(kind)
        return self.t_create(self.t_sub_shape(S), kind)

    # ------------------------------------------------------------ fitting
    def t_fit(self, e, tv, lim=None):
        """Scale e so that its magnitude is at most lim (default: its dtype's)."""
        if isinstance(tv, Scalar):
            return e, tv
        if lim is None:
            lim = LIM[tv.dt]
        if tv.mag <= lim:
            return e, tv
        if tv.dt in INTS:
            m = self.r.randint(5, 50)
            return "((%s) %% %d)" % (e, m), TV(tv.shape, tv.dt, m)
        if self.chance(0.3):
            return "tanh(%s)" % e, TV(tv.shape, tv.dt, 1)
        k = math.ceil(math.log2(tv.mag / lim))
        return "((%s) * %s)" % (e, repr(2.0 ** -k)), TV(tv.shape, tv.dt, tv.mag * 2.0 ** -k)

    def t_exact(self, S, depth, kind="float", dt=None):
        """An expression of exactly shape S (and dtype dt if given)."""
        if self.chance(0.3) or depth >= self.t_maxdepth:
            vs = [n for n in self.t_var_cands(S, kind) if self.t_vars[n].shape == tuple(S)
                  and (dt is None or self.t_vars[n].dt == dt)]
            if vs:
                n = self.pick(vs)
                tv = self.t_vars[n]
                return n, TV(tv.shape, tv.dt, tv.mag, fresh=False)
            return self.t_create(S, kind, dt)
        e, tv = self.tx(S, depth, kind)
        if isinstance(tv, Scalar) or tv.dt == "bool":
            return self.t_create(S, kind, dt)
        if dt is not None and tv.dt != dt:
            e, tv = "cast(%s, %s)" % (e, dt), TV(tv.shape, dt, tv.mag)
            e, tv = self.t_fit(e, tv)
        if tv.shape != tuple(S):
            e = "(%s + zeros(%s%s))" % (e, self.t_shape_str(S), "" if tv.dt == "f32" else ", dtype=%s" % tv.dt)
            tv = TV(S, tv.dt, tv.mag)
        return e, tv

    # ------------------------------------------------------------ expressions
    def tx(self, S, depth=0, kind=None):
        """(expr, TV or Scalar): a tensor expression whose shape is into S."""
        if depth >= self.t_maxdepth or self.chance(0.25 + 0.1 * depth):
            e, tv = self.t_leaf(S, kind)
            return e, tv
        want_int = kind == "int"
        k = self.r.random()
        if k < 0.32:
            return self.t_binary(S, depth, kind)
        if k < 0.5 and not want_int:
            return self.t_unary(S, depth)
        if k < 0.55:
            return self.t_div(S, depth, kind)
        if k < 0.58 and not want_int:
            return self.t_pow(S, depth)
        if k < 0.63:
            return self.t_minmax(S, depth, kind)
        if k < 0.7:
            return self.t_where(S, depth, kind)
        if k < 0.74:
            return self.t_cast(S, depth, kind)
        if k < 0.82:
            return self.t_reduce(S, depth, kind)
        if k < 0.87 and not want_int:
            return self.t_norm(S, depth)
        if k < 0.93 and len(S) >= 1 and not self.t_big:
            return self.t_matmul(S, depth, kind)
        if k < 0.96 and len(S) >= 2 and not want_int and not self.t_big:
            return self.t_attention(S, depth)
        if k < 0.98 and len(S) >= 1 and not self.t_big:
            return self.t_concat(S, depth, kind)
        return self.t_leaf(S, kind)

    def t_operand(self, S, depth, kind, tensor=False):
        for _ in range(4):
            e, tv = self.tx(S, depth + 1, kind)
            if not (tensor and isinstance(tv, Scalar)):
                break
        if tensor and isinstance(tv, Scalar):
            e, tv = self.t_create(self.t_sub_shape(S), kind or "float")
        if not isinstance(tv, Scalar) and tv.dt == "bool":
            e, tv = "cast(%s, %s)" % (e, "f32" if kind != "int" else "i64"), TV(
                tv.shape, "f32" if kind != "int" else "i64", 1)
        return e, tv

    def t_result(self, a, b, dt_hint=None):
        """Shape and dtype of a binary op of a and b (TV or Scalar)."""
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            return (), None
        if isinstance(a, Scalar):
            return b.shape, promote_scalar(b.dt, a.kind)
        if isinstance(b, Scalar):
            return a.shape, promote_scalar(a.dt, b.kind)
        return self.t_bcast(a.shape, b.shape), promote(a.dt, b.dt)

    def t_two_operands(self, S, depth, kind):
        """A tensor and a second operand of `kind`, in either order."""
        ea, a = self.t_operand(S, depth, kind, tensor=True)
        eb, b = self.t_operand(S, depth, kind)
        if kind == "int" and isinstance(b, Scalar) and b.kind == "float":
            eb, b = self.t_scalar("int")
        if kind == "int" and not isinstance(b, Scalar) and is_float(b.dt):
            eb, b = self.t_create(b.shape, "int")
        if self.chance(0.3):
            ea, a, eb, b = eb, b, ea, a
        return ea, a, eb, b

    def t_binary(self, S, depth, kind):
        op = self.pick(["+", "-", "*", "+", "*"])
        ea, a, eb, b = self.t_two_operands(S, depth, kind)
        shape, dt = self.t_result(a, b)
        if op == "*":
            mag = a.mag * b.mag
            if mag > LIM[dt]:
                # scale the bigger operand first
                if a.mag >= b.mag and not isinstance(a, Scalar):
                    ea, a = self.t_fit(ea, a, max(1.0, LIM[dt] / max(b.mag, 1.0)))
                elif not isinstance(b, Scalar):
                    eb, b = self.t_fit(eb, b, max(1.0, LIM[dt] / max(a.mag, 1.0)))
                mag = a.mag * b.mag
        else:
            mag = a.mag + b.mag
        e = "(%s %s %s)" % (ea, op, eb)
        return self.t_fit(e, TV(shape, dt, mag))

    def t_unary(self, S, depth):
        e, x = self.t_operand(S, depth, None, tensor=True)
        f = self.pick(["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "gelu", "silu", "sin", "cos",
                       "abs", "neg", "tanh", "gelu", "relu", "neg"])
        dt = x.dt if (is_float(x.dt) or f in ("abs", "relu", "neg")) else "f32"
        if f == "exp":
            if x.mag > 4:
                e, x = self.t_fit(e, x, 4.0)
            return "exp(%s)" % e, TV(x.shape, dt, math.exp(x.mag))
        if f == "log":
            c = self.pick([0.5, 1.0, 0.125, 2.0])
            return "log(abs(%s) + %s)" % (e, c), TV(x.shape, dt, max(abs(math.log(c)), math.log(x.mag + c)) + 0.01)
        if f == "sqrt":
            c = self.pick([0.0, 0.25, 1.0])
            inner = "abs(%s)" % e if c == 0 else "abs(%s) + %s" % (e, c)
            return "sqrt(%s)" % inner, TV(x.shape, dt, math.sqrt(x.mag + c) + 0.01)
        if f == "rsqrt":
            c = self.pick([0.25, 1.0, 0.5])
            return "rsqrt(abs(%s) + %s)" % (e, c), TV(x.shape, dt, 1 / math.sqrt(c) + 0.01)
        if f in ("tanh", "sigmoid", "sin", "cos"):
            return "%s(%s)" % (f, e), TV(x.shape, dt, 1.0)
        if f == "neg":
            if x.dt == "bool":
                return self.t_leaf(S, None)
            return "(-%s)" % e, TV(x.shape, dt, x.mag)
        return "%s(%s)" % (f, e), TV(x.shape, dt, x.mag + 0.5)

    def t_div(self, S, depth, kind):
        ea, a = self.t_operand(S, depth, kind, tensor=True)
        if kind == "int" or (a.dt in INTS and self.chance(0.4)):
            # floor division / modulo of ints by a nonzero int
            op = self.pick(["//", "%"])
            if self.chance(0.6):
                v = self.pick([2, 3, 5, 7, -3, -2, 10])
                return "(%s %s %s)" % (ea, op, "(%d)" % v if v < 0 else v), TV(
                    a.shape, a.dt, a.mag if op == "//" else abs(v))
            eb, b = self.t_operand(S, depth, "int", tensor=True)
            shape, dt = self.t_result(a, b)
            if a.dt not in INTS or b.dt not in INTS:
                return ea, a
            return "(%s %s (abs(%s) + 1))" % (ea, op, eb), TV(shape, dt, a.mag if op == "//" else b.mag + 1)
        k = self.r.random()
        if k < 0.4:
            v = self.pick([2.0, -4.0, 0.5, 3.0, 7.0, -1.5, 0.25])
            shape, dt = self.t_result(a, Scalar("float", 1))
            return self.t_fit("(%s / %s)" % (ea, self.t_fstr(v)), TV(shape, dt, a.mag / abs(v)))
        if k < 0.5 and self.chance(0.5):
            # a scalar divided by a tensor
            v = self.pick([1.0, 2.0, -3.0])
            c = self.pick([0.5, 1.0])
            return self.t_fit("(%s / (abs(%s) + %s))" % (self.t_fstr(v), ea, c),
                              TV(a.shape, a.dt if is_float(a.dt) else "f32", abs(v) / c))
        eb, b = self.t_operand(S, depth, None, tensor=True)
        c = self.pick([0.5, 1.0, 2.0])
        if self.chance(0.3):
            den, dmin = "(sigmoid(%s) + %s)" % (eb, c), c
        else:
            den, dmin = "(abs(%s) + %s)" % (eb, c), c
        shape, dt = self.t_result(a, b)
        if dt in INTS or dt == "bool":
            dt = "f32"
        return self.t_fit("(%s / %s)" % (ea, den), TV(shape, dt, a.mag / dmin))

    def t_pow(self, S, depth):
        e, x = self.t_operand(S, depth, None, tensor=True)
        k = self.r.random()
        if k < 0.4:
            p = self.pick([2, 3, 2])
            lim = LIM[x.dt] ** (1.0 / p)
            e, x = self.t_fit(e, x, min(lim, 30.0))
            return "(%s ** %d)" % (e, p), TV(x.shape, x.dt, x.mag ** p)
        dt = x.dt if is_float(x.dt) else "f32"
        if k < 0.7:
            q = self.pick([0.5, 1.5, -0.5, 0.25])
            c = self.pick([0.25, 1.0])
            e, x = self.t_fit(e, x, 20.0)
            mag = (x.mag + c) ** q if q > 0 else c ** q
            return "((abs(%s) + %s) ** %s)" % (e, c, self.t_fstr(q)), TV(x.shape, dt, mag + 0.01)
        e, x = self.t_fit(e, x, 4.0)
        return "(2.0 ** %s)" % e, TV(x.shape, dt, 2.0 ** x.mag)

    def t_minmax(self, S, depth, kind):
        ea, a, eb, b = self.t_two_operands(S, depth, kind)
        shape, dt = self.t_result(a, b)
        return "%s(%s, %s)" % (self.pick(["min", "max"]), ea, eb), TV(shape, dt, max(a.mag, b.mag))

    def t_cmp(self, S, depth):
        ea, a = self.t_operand(S, depth, None, tensor=True)
        if self.chance(0.35):
            eb, b = self.t_scalar("float" if is_float(a.dt) or self.chance(0.3) else "int")
        else:
            eb, b = self.t_operand(S, depth, None, tensor=True)
        shape = a.shape if isinstance(b, Scalar) else self.t_bcast(a.shape, b.shape)
        return "(%s %s %s)" % (ea, self.pick(["<", "<=", ">", ">=", "==", "!="]), eb), TV(shape, "bool", 1)

    def t_where(self, S, depth, kind):
        ec, c = self.t_cmp(S, depth)
        if kind is None and self.chance(0.2):
            return ec, c      # a bool tensor
        ea, a = self.t_operand(S, depth, kind)
        eb, b = self.t_operand(S, depth, kind)
        if kind == "int":
            if isinstance(a, Scalar) and a.kind == "float":
                ea, a = self.t_scalar("int")
            if isinstance(b, Scalar) and b.kind == "float":
                eb, b = self.t_scalar("int")
            if not isinstance(a, Scalar) and is_float(a.dt):
                ea, a = self.t_create(a.shape, "int")
            if not isinstance(b, Scalar) and is_float(b.dt):
                eb, b = self.t_create(b.shape, "int")
        if isinstance(a, Scalar) and isinstance(b, Scalar):
            dt = "f32" if "float" in (a.kind, b.kind) else "i64"
            shape = c.shape
        else:
            shape, dt = self.t_result(a, b)
            shape = self.t_bcast(shape, c.shape)
        return "where(%s, %s, %s)" % (ec, ea, eb), TV(shape, dt, max(a.mag, b.mag))

    def t_cast(self, S, depth, kind):
        e, x = self.t_operand(S, depth, None, tensor=True)
        if kind == "int":
            dt = self.pick(INTS)
            if is_float(x.dt):
                e, x = self.t_fit(e, x, 1000.0)
            return "cast(%s, %s)" % (e, dt), TV(x.shape, dt, x.mag + 1)
        dt = self.pick(["f32", "f16", "bf16", "f16", "bf16", "i64"]) if kind is None else self.t_rand_float_dt()
        e, x = self.t_fit(e, x, LIM[dt])
        return "cast(%s, %s)" % (e, dt), TV(x.shape, dt, x.mag * 1.01 + 1)

    def t_reduce(self, S, depth, kind):
        f = self.pick(["sum", "sum", "mean", "amax", "amin", "argmax"])
        if kind == "int" and f == "mean":
            f = "sum"
        # the input: a shape into S, maybe with one more leading dim
        e, x = self.t_operand(S, depth, kind, tensor=True)
        r = len(x.shape)
        if r == 0:
            return e, x
        opts = []
        ax = self.r.randrange(r)
        if self.chance(0.2):
            axs, red = None, list(range(r))
        else:
            axs, red = ax, [ax]
        if f in ("mean", "amax", "amin", "argmax") and any(self.t_dmin(x.shape[j]) == 0 for j in red):
            f = "sum"
        keep = self.chance(0.5)
        if axs is None:
            shape = ()
        elif keep:
            shape = tuple(1 if j == ax else d for j, d in enumerate(x.shape))
        else:
            shape = tuple(d for j, d in enumerate(x.shape) if j != ax)
            if not self.t_into(shape, S):
                keep = True
                shape = tuple(1 if j == ax else d for j, d in enumerate(x.shape))
        if axs is not None:
            a = ax if self.chance(0.5) else ax - r
            opts.append("axis=%d" % a)
            if keep:
                opts.append("keepdim=true")
            elif self.chance(0.3):
                opts.append("keepdim=false")
        ext = 1
        for j in red:
            ext *= max(1, self.t_dmax(x.shape[j]))
        if f == "argmax":
            dt, mag = "i64", ext
            if kind == "float":
                out = "cast(argmax(%s%s), f32)" % (e, "".join(", " + o for o in opts))
                return out, TV(shape, "f32", mag)
        elif f == "sum":
            dt = x.dt if is_float(x.dt) else "i64"
            mag = x.mag * ext
            if mag > LIM[dt]:
                if dt == "f16":
                    e, x = "cast(%s, f32)" % e, TV(x.shape, "f32", x.mag)
                    dt = "f32"
                if x.mag * ext > LIM[dt]:
                    e, x = self.t_fit(e, x, max(LIM[dt] / ext, 1e-3))
                mag = x.mag * ext
        elif f == "mean":
            dt = x.dt if is_float(x.dt) else "f32"
            mag = x.mag
        else:
            dt, mag = x.dt, x.mag
        out = "%s(%s%s)" % (f, e, "".join(", " + o for o in opts))
        return out, TV(shape, dt, mag)

    def t_norm(self, S, depth):
        f = self.pick(["softmax", "layer_norm", "rms_norm", "softmax"])
        e, x = self.t_operand(S, depth, "float", tensor=True)
        r = len(x.shape)
        if r == 0:
            return e, x
        dt = x.dt if is_float(x.dt) else "f32"
        if f == "softmax":
            if self.chance(0.5):
                return "softmax(%s)" % e, TV(x.shape, dt, 1)
            ax = self.r.randrange(r)
            return "softmax(%s, axis=%d)" % (e, self.pick([ax, ax - r])), TV(x.shape, dt, 1)
        D = x.shape[-1]
        opts = []
        wmag = 1.0
        if self.chance(0.6):
            ew, w = self.t_exact((D,), depth + 1, "float")
            ew, w = self.t_fit(ew, w, 4.0)
            opts.append("weight=%s" % ew)
            wmag = w.mag
        bmag = 0.0
        if f == "layer_norm" and self.chance(0.5):
            eb, b = self.t_exact((D,), depth + 1, "float")
            eb, b = self.t_fit(eb, b, 8.0)
            opts.append("bias=%s" % eb)
            bmag = b.mag
        if self.chance(0.3):
            opts.append("eps=%s" % self.pick(["1e-3", "0.01", "1e-6"]))
        mag = math.sqrt(max(1, self.t_dmax(D))) * wmag + bmag + 0.1
        return "%s(%s%s)" % (f, e, "".join(", " + o for o in opts)), TV(x.shape, dt, mag)

    def t_kdim(self):
        pool = [d for d in self.t_pool if isinstance(d, int) and d <= 64]
        return self.pick(pool + [1, 2, 3, 5, 8, 16, 17, 0] if self.chance(0.3) else pool or [4])

    def t_matmul(self, S, depth, kind):
        kd = self.t_kdim()
        n = S[-1]
        k = self.r.random()
        if len(S) >= 2 and k < 0.7:
            m = S[-2]
            lead = S[:-2]
            if lead and self.chance(0.5):
                A = tuple(lead) + (m, kd)
            else:
                A = (m, kd)
            B = (kd, n) if self.chance(0.7) or not lead else tuple(lead) + (kd, n)
        elif k < 0.9 and len(S) >= 2 and self.t_into((S[-2],), S):
            # matrix @ vector
            A, B = (S[-2], kd), (kd,)
        elif k < 0.95:
            # vector @ vector: a 0-d tensor
            A, B = (kd,), (kd,)
        else:
            # vector @ matrix
            A, B = (kd,), (kd, n)
        mkind = "int" if (kind == "int" or (kind is None and self.chance(0.15))) else "float"
        ea, a = self.t_exact(A, depth + 1, mkind)
        eb, b = self.t_exact(B, depth + 1, mkind)
        if self.chance(0.2):
            ea = "matmul(%s, %s)" % (ea, eb)
        else:
            ea = "(%s @ %s)" % (ea, eb)
        if len(A) == 1 and len(B) == 1:
            shape = ()
        elif len(A) == 1 and len(B) >= 2:
            shape = B[:-2] + B[-1:]
        elif len(B) == 1:
            shape = A[:-1]
        else:
            batch = self.t_bcast(A[:-2], B[:-2])
            shape = batch + (A[-2], B[-1])
        dt = promote(a.dt, b.dt)
        mag = a.mag * b.mag * max(1, kd)
        out = TV(shape, dt, mag)
        if mag > LIM[dt]:
            # the product itself must stay finite in its dtype: scale an input
            ea, a2 = self.t_matmul_scaled(A, B, depth, mkind, dt)
            out = TV(shape, a2.dt, a2.mag)
        return self.t_fit(ea, out)

    def t_matmul_scaled(self, A, B, depth, mkind, dt):
        """A product whose inputs are small enough for its dtype."""
        kd = max(1, self.t_dmax(A[-1]))
        ea, a = self.t_create(A, mkind)
        eb, b = self.t_create(B, mkind)
        lim = math.sqrt(LIM[promote(a.dt, b.dt)] / kd)
        ea, a = self.t_fit(ea, a, lim)
        eb, b = self.t_fit(eb, b, lim)
        return "(%s @ %s)" % (ea, eb), TV((), promote(a.dt, b.dt), a.mag * b.mag * kd)

    def t_attention(self, S, depth):
        Sq, D = S[-2], S[-1]
        lead = tuple(S[:-2])
        if lead and self.chance(0.3):
            lead = lead[1:]
        Sk = self.pick([Sq, Sq, self.t_kdim()])
        klead = lead if (not lead or self.chance(0.7)) else (1,) * len(lead)
        eq, q = self.t_exact(lead + (Sq, D), depth + 1, "float")
        ek, k = self.t_exact(klead + (Sk, D), depth + 1, "float")
        ev, v = self.t_exact(klead + (Sk, D), depth + 1, "float")
        opts = []
        if self.chance(0.5):
            opts.append("causal=%s" % self.pick(["true", "false"]))
        if self.chance(0.3):
            opts.append("scale=%s" % self.pick(["0.5", "0.125", "1.0", "0.0"]))
        dt = promote(promote(q.dt, k.dt), v.dt)
        return "attention(%s, %s, %s%s)" % (eq, ek, ev, "".join(", " + o for o in opts)), TV(
            lead + (Sq, D), dt, v.mag + 0.01)

    def t_concat(self, S, depth, kind):
        ax = self.r.randrange(len(S))
        d = S[ax]
        if not isinstance(d, int):
            return self.tx(S, depth + 1, kind)
        c1 = self.r.randint(0, d)
        p1 = tuple(c1 if j == ax else x for j, x in enumerate(S))
        p2 = tuple(d - c1 if j == ax else x for j, x in enumerate(S))
        kind = kind or ("float" if self.chance(0.8) else "int")
        dt = self.t_rand_float_dt() if kind == "float" else self.pick(INTS)
        ea, a = self.t_exact(p1, depth + 1, kind, dt)
        eb, b = self.t_exact(p2, depth + 1, kind, dt)
        axs = ax if self.chance(0.6) else ax - len(S)
        return "concat([%s, %s], axis=%d)" % (ea, eb, axs), TV(S, dt, max(a.mag, b.mag))
