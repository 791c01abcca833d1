"""Tensor programs of the fuzz generator (gen_program.Gen, profile `tensors`).

Hot loops (20 to 400 iterations; loops over big tensors are hot early by work)
that apply the language's tensor operations (spec section 7) to globals and to
tensors made in the loop, aimed at the JIT's tensor sinking and fusion:

- elementwise chains with broadcasting (rank 0 to 3, size-1 dims), + - * / **,
  unary minus, comparisons, where, min/max, cast, every unary built-in, mixed
  f32/f16/bf16/i32/i64/bool inputs (the spec's promotion);
- reductions (sum mean amax amin argmax, axis= also negative, keepdim=),
  softmax, layer_norm, rms_norm, matmul with epilogues, attention (causal or
  not, batched, broadcast batch dims), sub-tensors, slice, concat;
- shapes that change between iterations (a dim from i % k, growing, switching
  late), empty dims, element stores between two operations on one tensor,
  tensors escaping into lists and globals, printed on rare iterations;
- sometimes a deliberate shape error late in a hot loop.

Every value is checked exactly: element reads print as floats (shortest
round-trip digits) and sums are accumulated; nothing is rounded away.  The
generator tracks each tensor's shape (dims are constants or per-iteration
symbols), dtype and a bound on its magnitude, so that the programs are valid,
f16 never overflows, no NaN is made and ints never wrap; only the deliberate
errors fail.
"""

import math

from gen_tensor_exprs import INTS, LIM, Scalar, TensorExprsMixin, TV, is_float, promote


class TensorsMixin(TensorExprsMixin):
    def program(self):
        if self.profile == "tensors":
            return self.tensor_program()
        return super().program()

    # ------------------------------------------------------------ statements
    def t_let(self, e, tv, prefix="t"):
        name = self.fresh(prefix)
        self.emit("let %s = %s" % (name, e))
        self.t_vars[name] = TV(tv.shape, tv.dt, tv.mag, fresh=tv.fresh)
        self.t_locals.append(name)
        return name

    def t_check(self, name):
        """Fold a tensor into the accumulators exactly (sum or an element)."""
        tv = self.t_vars[name]
        r = len(tv.shape)
        if r and not self.t_may_empty(tv.shape) and self.chance(0.35):
            idx = ", ".join(self.t_index(d) for d in tv.shape)
            rd = "%s[%s]" % (name, idx)
            if tv.dt == "bool":
                self.emit("if %s { %s = %s + 1 }" % (rd, self.t_iacc, self.t_iacc))
            elif tv.dt in INTS:
                self.emit("%s = %s + %s" % (self.t_iacc, self.t_iacc, rd))
            else:
                self.emit("%s = %s + %s" % (self.t_acc, self.t_acc, rd))
            return
        if tv.dt == "bool":
            self.emit("%s = %s + item(sum(cast(%s, i64)))" % (self.t_iacc, self.t_iacc, name))
        elif tv.dt in INTS:
            self.emit("%s = %s + item(sum(%s))" % (self.t_iacc, self.t_iacc, name))
        elif tv.dt == "f32":
            self.emit("%s = %s + item(sum(%s))" % (self.t_acc, self.t_acc, name))
        else:
            self.emit("%s = %s + item(sum(cast(%s, f32)))" % (self.t_acc, self.t_acc, name))

    def t_index(self, d):
        c = self.r.randint(0, 6)
        if isinstance(d, int):
            if d == 1:
                return "0"
            return self.pick(["%d" % self.r.randrange(d), "(%s + %d) %% %d" % (self.t_i, c, d)])
        return "(%s + %d) %% %s" % (self.t_i, c, d)

    def t_store(self, name):
        """t[i, j] = x on a tensor made in this iteration (or a global)."""
        tv = self.t_vars[name]
        if not tv.shape or self.t_may_empty(tv.shape):
            return False
        idx = ", ".join(self.t_index(d) for d in tv.shape)
        if tv.dt == "bool":
            val, mag = "%s %% 2 == 0" % self.t_i, 1
        elif tv.dt in INTS:
            val, mag = "%s %% %d - 3" % (self.t_i, self.r.randint(5, 9)), 9
        else:
            val, sc = self.t_scalar("float")
            mag = sc.mag
        self.emit("%s[%s] = %s" % (name, idx, val))
        tv.mag = max(tv.mag, mag)
        return True

    def t_rare_cond(self, trip):
        P = self.pick([7, 13, 37, 50, 97])
        if self.chance(0.3):
            return "%s == %d" % (self.t_i, self.r.randint(trip * 2 // 3, trip - 1))
        return "%s %% %d == %d" % (self.t_i, P, self.r.randrange(P))

    def t_escape(self, name, trip):
        k = self.r.random()
        if k < 0.35:
            self.emit("%s[%s %% %d] = %s" % (self.t_outs, self.t_i, self.t_outs_len, name))
        elif k < 0.6:
            g = self.fresh("keep")
            self.t_keeps.append(g)
            self.t_decl.append("let %s = nil" % g)
            self.emit("%s = %s" % (g, name))
        elif k < 0.8:
            self.emit("if %s {" % self.t_rare_cond(trip))
            self.ind += 1
            if self.chance(0.5):
                self.emit('print("at", %s, %s)' % (self.t_i, name))
            else:
                self.emit('dump("at " + str(%s), %s)' % (self.t_i, name))
            self.ind -= 1
            self.emit("}")
        else:
            lst = self.fresh("lst")
            self.emit("let %s = [%s, %s]" % (lst, name, self.t_i))
            self.emit("%s = %s + numel(%s[0]) + %s[1]" % (self.t_iacc, self.t_iacc, lst, lst))

    def t_carry(self):
        """A global tensor updated in the loop (same shape and dtype)."""
        gs = [g for g in self.t_globals if self.t_vars[g].dt != "bool"]
        if not gs:
            return
        g = self.pick(gs)
        tv = self.t_vars[g]
        kind = "float" if is_float(tv.dt) else "int"
        e, x = self.tx(tv.shape, 1, kind)
        if kind == "float":
            c = self.pick(["0.5", "0.25", "1.0"])
            out = "tanh(%s * %s + %s)" % (g, c, e) if self.chance(0.6) else "sin(%s + %s)" % (g, e)
            rdt = tv.dt if isinstance(x, Scalar) else promote(tv.dt, x.dt)
            if rdt != tv.dt:
                out = "cast(%s, %s)" % (out, tv.dt)
            if x.mag > LIM[tv.dt] / 2:
                return
            self.emit("%s = %s" % (g, out))
            tv.mag = max(tv.mag, 1.0)
        else:
            m = self.r.randint(5, 60)
            rdt = tv.dt if isinstance(x, Scalar) else promote(tv.dt, x.dt)
            if rdt not in INTS:
                return
            out = "(%s + %s) %% %d" % (g, e, m)
            if rdt != tv.dt:
                out = "cast(%s, %s)" % (out, tv.dt)
            self.emit("%s = %s" % (g, out))
            tv.mag = max(tv.mag, m)

    def t_template(self, S):
        """A statement shape the fusion work is aimed at; returns the name made."""
        k = self.r.random()
        if k < 0.3 and len(S) >= 1 and not (self.t_big and len(S) < 2):
            # matmul + bias + activation (+ residual)
            D = S[-1]
            F = self.t_kdim()
            lead = S[:-1]
            ex, x = self.t_exact(tuple(lead) + (D,), 2, "float")
            ex, x = self.t_fit(ex, x, 4.0)
            ew1, w1 = self.t_create((D, F), "float", self.pick(["f32", "f32", x.dt]))
            ew1, w1 = self.t_fit(ew1, w1, 1.0 / math.sqrt(max(1, self.t_dmax(D))))
            eb1, b1 = self.t_exact((F,), 2, "float")
            eb1, b1 = self.t_fit(eb1, b1, 2.0)
            act = self.pick(["relu", "gelu", "silu", "tanh", "sigmoid", ""])
            h = "%s((%s @ %s) + %s)" % (act, ex, ew1, eb1)
            hmag = x.mag * w1.mag * max(1, self.t_dmax(D)) + b1.mag + 1
            dt = promote(promote(x.dt, w1.dt), b1.dt)
            if self.chance(0.5):
                ew2, w2 = self.t_create((F, D), "float", "f32")
                ew2, w2 = self.t_fit(ew2, w2, 1.0 / max(1.0, hmag * max(1, self.t_dmax(F))))
                h = "(%s @ %s)" % (h, ew2)
                if self.chance(0.7):
                    h = "(%s + %s)" % (h, ex)
                return self.t_let(h, TV(tuple(lead) + (D,), promote(dt, "f32"), x.mag + 2), "mm")
            return self.t_let(h, TV(tuple(lead) + (F,), dt, hmag), "mm")
        if k < 0.45 and len(S) >= 1:
            # softmax by hand and the built-in, reductions with their consumers
            e, x = self.t_exact(S, 2, "float")
            ax = self.pick([-1, len(S) - 1, 0, -len(S)])
            if self.t_dmin(S[ax]) == 0:
                ax = None
            if ax is not None and x.dt == "f32":
                a = self.t_let(e, x)
                m = "amax(%s, axis=%d, keepdim=true)" % (a, ax)
                ex = "exp(%s - %s)" % (a, m)
                return self.t_let("%s / sum(%s, axis=%d, keepdim=true) - softmax(%s, axis=%d)" % (
                    ex, ex, ax, a, ax), TV(S, "f32", 2), "sm")
            e, x = self.t_fit(e, x, 100.0)
            return self.t_let("%s - mean(%s, axis=-1, keepdim=true)" % (e, e) if self.t_dmin(S[-1]) > 0 else e,
                              TV(S, x.dt, 2 * x.mag), "rd")
        if k < 0.55 and len(S) >= 2 and not self.t_big:
            e, tv = self.t_attention(S, 1)
            return self.t_let(e, tv, "at")
        e, tv = self.tx(S, 0)
        if isinstance(tv, Scalar):
            e, tv = self.t_create(S, "float")
        return self.t_let(e, tv)

    def t_loop(self, big=False):
        trip = self.pick([20, 30, 60, 100, 150, 200, 300, 400]) if not big else self.r.randint(12, 40)
        i = self.fresh("i")
        while i in ("i32", "i64"):      # not the dtypes' names
            i = self.fresh("i")
        self.t_i = i
        self.emit("for %s in range(%d) {" % (i, trip))
        self.ind += 1
        saved_vars = dict(self.t_vars)
        self.t_locals = []
        self.t_fsc = []
        s = self.fresh("s")
        self.emit("let %s = (%s %% %d) * 0.25 - %s" % (s, i, self.r.randint(3, 9), self.pick(["0.5", "1.0", "0.75"])))
        self.t_fsc.append((s, 2.25))
        # symbols: pool dims whose value changes between iterations
        self.t_syms = dict(self.t_const_syms)
        frame = list(self.pick(self.t_frames))
        if self.chance(0.75):
            for _ in range(self.r.randint(1, 2)):
                pos = [j for j, d in enumerate(frame) if isinstance(d, int) and d >= 1]
                if not pos:
                    break
                j = self.pick(pos)
                V = frame[j]
                n = self.fresh("n")
                k = self.r.random()
                if k < 0.3:
                    self.emit("let %s = 1 + %s %% %d" % (n, i, V))
                    lo = 1
                elif k < 0.45:
                    self.emit("let %s = %s %% %d" % (n, i, V + 1))
                    lo = 0
                elif k < 0.65:
                    P = max(1, trip // max(V, 1))
                    self.emit("let %s = min(%d, 1 + %s // %d)" % (n, V, i, P))
                    lo = 1
                elif k < 0.85:
                    K = self.r.randint(trip // 2, trip - 1)
                    alt = self.r.randint(0 if self.chance(0.3) else 1, V)
                    self.emit("let %s = %d" % (n, V))
                    self.emit("if %s >= %d { %s = %d }" % (i, K, n, alt))
                    lo = min(alt, V)
                else:
                    vals = [self.r.randint(0 if self.chance(0.2) else 1, V) for _ in range(self.r.randint(2, 4))]
                    vals[0] = V
                    self.emit("let %s = [%s][%s %% %d]" % (n, ", ".join(map(str, vals)), i, len(vals)))
                    lo = min(vals)
                self.t_syms[n] = (lo, V)
                # every occurrence of V in the frame is the same dim: make them one symbol
                frame = [n if d == V else d for d in frame]
        S = tuple(frame)
        nstmt = self.r.randint(2, 6) if not big else self.r.randint(1, 3)
        self.t_big = big
        self.t_maxdepth = 3 if not big else 2
        made = []
        for _ in range(nstmt):
            k = self.r.random()
            if k < 0.12 and made:
                # store between two operations on the same tensor
                t = self.pick(made)
                if self.t_vars[t].fresh and self.t_store(t):
                    made.append(self.t_after_store(t))
                    continue
            if k < 0.2 and self.t_globals and not big:
                self.t_carry()
                continue
            if k < 0.25 and self.t_funcs and not big:
                f, params, ret = self.pick(self.t_funcs)
                args = []
                for p in params:
                    e, tv = self.t_exact(p.shape, 2, "float" if is_float(p.dt) else "int", p.dt)
                    e, tv = self.t_fit(e, tv, p.mag)
                    args.append(e)
                made.append(self.t_let("%s(%s)" % (f, ", ".join(args)), ret, "fc"))
                continue
            Sx = S if self.chance(0.8) else self.t_sub_shape(S)
            made.append(self.t_template(Sx) if self.chance(0.4) else self.t_template_ew(Sx))
            if self.chance(0.25):
                self.t_store(made[-1]) if self.t_vars[made[-1]].fresh else None
        if not made:
            made.append(self.t_template_ew(S))
        for t in made:
            if self.chance(0.7):
                self.t_check(t)
        for t in made:
            if self.chance(0.3):
                self.t_escape(t, trip)
        if self.chance(0.3):
            self.emit("if %s { print(%s, %s) }" % (self.t_rare_cond(trip), i, self.t_acc))
        self.ind -= 1
        self.emit("}")
        # loop locals go out of scope
        self.t_vars = {k: v for k, v in self.t_vars.items() if k in saved_vars}
        self.t_syms = dict(self.t_const_syms)
        self.t_fsc = []
        self.t_i = None
        self.t_big = False

    def t_after_store(self, t):
        """An operation on t right after an element store into it."""
        a = self.t_vars[t]
        if a.dt == "bool":
            return self.t_let("where(%s, %s, %s)" % (t, self.t_scalar("float")[0], self.t_scalar("float")[0]),
                              TV(a.shape, "f32", 3))
        kind = "float" if is_float(a.dt) else "int"
        e, b = self.tx(a.shape, 1, kind)
        if isinstance(b, Scalar) and self.chance(0.5):
            e, b = self.t_create(self.t_sub_shape(a.shape), kind)
        op = self.pick(["+", "-", "*"])
        shape, dt = self.t_result(a, b)
        mag = a.mag * b.mag if op == "*" else a.mag + b.mag
        e, tv = self.t_fit("(%s %s %s)" % (t, op, e), TV(shape, dt, mag))
        return self.t_let(e, tv)

    def t_template_ew(self, S):
        e, tv = self.tx(S, 0)
        if isinstance(tv, Scalar):
            e, tv = self.t_create(S, "float")
        return self.t_let(e, tv)

    # ------------------------------------------------------------ program
    def t_functions(self):
        self.t_funcs = []
        for k in range(self.r.randint(0, 2)):
            name = "tf%d" % k
            S = tuple(self.pick(self.t_frames))
            if any(not isinstance(d, int) for d in S):
                continue
            params = []
            saved = self.t_vars
            self.t_vars = {}
            for j in range(self.r.randint(1, 3)):
                P = S if j == 0 or self.chance(0.5) else self.t_sub_shape(S)
                dt = self.pick(["f32", "f32", "f16", "bf16", "i64"])
                tv = TV(P, dt, 7 if is_float(dt) else 50, fresh=False)
                pn = "x%d" % j
                self.t_vars[pn] = tv
                params.append(tv)
            self.emit("fn %s(%s) {" % (name, ", ".join("x%d" % j for j in range(len(params)))))
            self.ind += 1
            self.t_i = "1"
            self.t_fsc = []
            self.t_locals = []
            last = None
            for _ in range(self.r.randint(1, 3)):
                last = self.t_template_ew(S) if self.chance(0.6) else self.t_template(S)
            ret = self.t_vars[last]
            self.emit("return %s" % last)
            self.ind -= 1
            self.emit("}")
            self.t_vars = saved
            self.t_i = None
            # a result of a call is a fresh tensor; its magnitude as computed
            self.t_funcs.append((name, params, TV(ret.shape, ret.dt, ret.mag)))

    def t_error_loop(self):
        """A deliberate shape error late in a hot loop."""
        N = self.r.randint(30, 250)
        K = N - self.r.randint(1, 10)
        kind = self.pick(["bcast", "bcast", "matmul", "norm", "attn", "where", "reshape", "index"])
        where = self.pick(["loop", "loop", "call"])
        self.emit("# deliberate runtime error: %s in %s at iteration %d" % (kind, where, K))
        D = self.pick([2, 3, 4, 5, 8, 17, 24])
        R = self.pick([1, 3, 4, 16, 33])
        X = self.fresh("X")
        self.emit("let %s = randn([%d, %d], seed=%d)" % (X, R, D, self.r.randint(0, 9)))
        bad = self.pick([D + 1, D + 2, 2 * D + 1])
        if kind == "reshape":
            bads = [m for m in (D + 1, D + 2, 2 * D + 1) if (R * D) % m]
            if bads:
                bad = self.pick(bads)
            else:
                kind = "bcast"
        body = ["let m = %d" % D, "if i == %d { m = %d }" % (K, bad)]
        if kind == "bcast":
            body.append("let e = exp(x * 0.5) + ones([m]) * s - x")
        elif kind == "matmul":
            body.append("let e = relu(x @ ones([m, 3]) + 1.0)")
        elif kind == "norm":
            body.append("let e = %s(x * s, weight=ones([m])) + x" % self.pick(["layer_norm", "rms_norm"]))
        elif kind == "attn":
            body.append("let e = attention(x, ones([4, m]), ones([4, m])) * 2.0")
        elif kind == "where":
            body.append("let e = where(x > 0.0, x, zeros([m])) + 1.0")
        elif kind == "reshape":
            body.append("let e = reshape(x * 2.0, [m, -1]) - 1.0")
        else:
            body.append("let e = x[0, m - 1 + m // %d] * ones([2, 2])" % (D + 1))
        if where == "call":
            self.emit("fn errf(x, i, s) {")
            for b in body:
                self.emit("  " + b)
            self.emit("  return e")
            self.emit("}")
        acc = self.fresh("eacc")
        self.emit("let %s = 0.0" % acc)
        self.emit("for i in range(%d) {" % N)
        self.emit("  let s = (i % 5) * 0.5")
        if where == "call":
            self.emit("  let e = errf(%s, i, s)" % X)
        else:
            self.emit("  let x = %s" % X)
            for b in body:
                self.emit("  " + b)
        self.emit("  %s = %s + item(sum(e))" % (acc, acc))
        self.emit('  if i %% %d == 0 { print("err-loop", i, %s) }' % (self.r.randint(5, 30), acc))
        self.emit("}")
        self.emit("print(%s)" % acc)

    def tensor_program(self):
        self.t_vars = {}
        self.t_globals = []
        self.t_syms = {}
        self.t_const_syms = {}
        self.t_fsc = []
        self.t_i = None
        self.t_keeps = []
        self.t_decl = []
        self.t_maxdepth = 3
        self.t_big = False
        self.emit("# generated by tests/fuzz/gen_program.py --profile tensors, seed %d" % self.seed)
        self.emit("fn dump(tag, t) {")
        self.emit("  let f = reshape(t, [-1])")
        self.emit("  let n = numel(t)")
        self.emit("  let vals = []")
        self.emit("  for k in range(0, n, n // 40 + 1) { push(vals, f[k]) }")
        self.emit("  if n > 0 { push(vals, f[n - 1]) }")
        self.emit("  print(tag, shape(t), dtype(t), vals)")
        self.emit("}")
        big = self.chance(0.1)
        # the pool of dims the shapes are made of
        small = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17, 24, 31, 32, 33, 48, 64]
        wts = [2, 5, 6, 6, 6, 5, 3, 5, 6, 2, 3, 5, 4, 3, 2, 3, 2, 1, 1]
        pool = []
        for _ in range(self.r.randint(2, 4)):
            pool.append(self.r.choices(small, wts)[0])
        self.t_pool = pool
        frames = []
        for _ in range(self.r.randint(2, 4)):
            rank = self.r.choices([0, 1, 2, 3], [1, 4, 8, 4])[0]
            frames.append(tuple(self.pick(pool) for _ in range(rank)))
        # keep the frames small: a few thousand elements at most
        self.t_frames = [f for f in frames if self.t_numel_max(f) <= 4096] or [(self.pick(pool), 8)]
        if big:
            bf = (self.r.randint(100, 250), self.pick([256, 300, 384, 512]))
            if self.chance(0.3):
                bf = (self.r.randint(100000, 130000),)
        acc = self.fresh("acc")
        iacc = self.fresh("iacc")
        self.t_acc, self.t_iacc = acc, iacc
        self.emit("let %s = 0.0" % acc)
        self.emit("let %s = 0" % iacc)
        self.t_outs = self.fresh("outs")
        self.t_outs_len = self.r.randint(2, 5)
        self.emit("let %s = list(%d, nil)" % (self.t_outs, self.t_outs_len))
        decl_at = len(self.lines)
        # globals
        for _ in range(self.r.randint(3, 7)):
            S = self.pick(self.t_frames)
            P = S if self.chance(0.5) else self.t_sub_shape(S)
            if self.chance(0.15) and len(P) < 3:
                P = (self.pick([1, 2, 3]),) + tuple(P)    # a leading dim for G[k]
            kind = self.r.choices(["float", "int", "bool"], [8, 2, 1])[0]
            e, tv = self.t_create(P, kind)
            g = self.fresh("G")
            self.emit("let %s = %s" % (g, e))
            self.t_vars[g] = TV(tv.shape, tv.dt, tv.mag, fresh=False)
            self.t_globals.append(g)
        self.t_functions()
        nloops = self.r.randint(2, 4)
        bigloop = self.r.randrange(nloops) if big else -1
        for L in range(nloops):
            if L == bigloop:
                saved = self.t_frames
                self.t_frames = [bf]
                self.t_loop(big=True)
                self.t_frames = saved
            else:
                self.t_loop()
        self.emit('print("acc", %s, %s)' % (acc, iacc))
        for g in self.t_globals:
            self.emit('dump("%s", %s)' % (g, g))
        for g in self.t_keeps:
            self.emit('dump("%s", %s)' % (g, g))
        self.emit("print(%s)" % self.t_outs)
        if self.chance(0.2):
            self.t_error_loop()
        # the globals written by escapes are declared at the top
        self.lines[decl_at:decl_at] = self.t_decl
        return "\n".join(self.lines) + "\n"
