"""Statements of the fuzz generator (gen_program.Gen): prints, assignments,
list and tensor temporaries, branches, loops, calls."""

from gen_base import INT64_MAX, OBJ_RATES, WORK_LIMIT, range_len


class StatementsMixin:
    # ------------------------------------------------------------ statements
    def print_stmt(self):
        n = self.r.randint(1, 3)
        items = []
        for _ in range(n):
            k = self.r.random()
            if k < 0.5:
                allv = []
                for t in ("int", "float", "str", "bool", "num", "dyn", "ilist", "mlist", "llist", "tensor"):
                    allv += self.visible(t)
                if allv:
                    items.append(self.pick(allv))
                    continue
            items.append(self.gen_any(1))
        if self.chance(0.3):
            items.insert(0, '"%s"' % self.fresh("p"))
        self.emit("print(%s)" % ", ".join(items))

    def assign_stmt(self):
        choices = []
        for t in ("int", "float", "str", "bool", "num"):
            for v in self.visible(t, mutable=True):
                choices.append((v, t))
        if not choices:
            return self.let_stmt()
        v, t = self.pick(choices)
        if t == "int":
            k = self.r.random()
            if k < 0.3:
                self.emit("%s = %s" % (v, self.gen_int()))
            elif k < 0.55:
                self.emit("%s %s %s" % (v, self.pick(["+=", "-=", "*="]), self.gen_int(1)))
            elif k < 0.65:
                self.emit("%s %s %s" % (v, self.pick(["//=", "%="]), self.nz_lit()))
            elif k < 0.8:
                self.emit("%s = %s * %d + %s" % (v, v, self.pick([31, 1000003, 6364136223846793005, -7]),
                                                 self.gen_int(1)))
            else:
                self.emit("%s = (%s + %s) %% %s" % (v, v, self.gen_int(1), self.nz_lit()))
        elif t == "float":
            k = self.r.random()
            if k < 0.5:
                self.emit("%s = %s" % (v, self.gen_float()))
            elif k < 0.8:
                self.emit("%s %s %s" % (v, self.pick(["+=", "-=", "*=", "/="]),
                                        self.pick([self.gen_float, self.gen_safe_float])(1)))
            else:
                self.emit("%s = %s * 0.5 + %s" % (v, v, self.gen_safe_float(1)))
        elif t == "str":
            self.emit("%s = %s" % (v, self.gen_str()))
            # bound the length (self-concatenation would otherwise grow exponentially)
            self.emit('if len(%s) > %d { %s = "%s" }' % (v, self.r.randint(5, 40), v,
                                                          self.pick(["", "r", "reset"])))
        elif t == "bool":
            self.emit("%s = %s" % (v, self.gen_bool()))
        else:
            self.emit("%s = %s" % (v, self.gen_num()))

    def let_stmt(self):
        t = self.pick(["int", "int", "float", "str", "bool", "num"])
        name = self.fresh("v")
        e = {"int": self.gen_int, "float": self.gen_float, "str": self.gen_str,
             "bool": self.gen_bool, "num": self.gen_num}[t]()
        self.emit("let %s = %s" % (name, e))
        self.declare_local(name, t)

    def list_stmt(self):
        ls = self.visible("ilist")
        ms = self.visible("mlist")
        k = self.r.random()
        if ls and k < 0.35:
            l = self.pick(ls)
            idx = self.gen_int(1)
            if self.chance(0.3):
                self.emit("%s[-1 - (%s %% len(%s))] = %s" % (l, idx, l, self.gen_int(1)))
            else:
                self.emit("%s[%s %% len(%s)] = %s" % (l, idx, l, self.gen_int(1)))
        elif ls and k < 0.55:
            l = self.pick(ls)
            self.emit("push(%s, %s)" % (l, self.gen_int(1)))
            self.emit("if len(%s) > %d { %s }" % (l, self.list_len[l] + self.r.randint(0, 10),
                                                   self.pick(["pop(%s)" % l, "%s = %s" % (
                                                       self.any_int_target(), "pop(%s)" % l)])))
        elif ms and k < 0.75:
            l = self.pick(ms)
            self.emit("%s[%s %% len(%s)] = %s" % (l, self.gen_int(1), l, self.gen_any(1)))
        elif k < 0.85:
            ls2 = self.visible("llist")
            if ls2:
                l = self.pick(ls2)
                self.emit("%s[%s %% len(%s)][%s %% 3] = %s" % (l, self.gen_int(1), l, self.gen_int(1),
                                                               self.gen_int(1)))
        else:
            ts = self.visible("tensor")
            if ts:
                t = self.pick(ts)
                shape, dt = self.tensors[t]
                idx = ", ".join("%s %% %d" % (self.gen_int(1), n) for n in shape)
                val = self.gen_int(1) if dt == "i64" else self.pick([self.gen_float, self.gen_safe_float])(1)
                if dt == "i64" and self.chance(0.3):
                    val = "%s[%s] + %s" % (t, idx, self.gen_int(2))
                self.emit("%s[%s] = %s" % (t, idx, val))

    def temp_list_stmt(self):
        # A small list literal that is only read at constant indices: the JIT
        # sinks its allocation. Branches that read it (or print it) make exits
        # where it is live, which must build it.
        n = self.r.randint(1, 4)
        elems = [self.gen_int(1) for _ in range(n)]
        name = self.fresh("t")
        self.emit("let %s = [%s]" % (name, ", ".join(elems)))
        tgt = self.any_int_target()
        self.emit("%s = %s + %s[%d]" % (tgt, tgt, name, self.r.randrange(n)))
        if self.chance(0.5):
            if self.chance(0.3) and self.cur_mult <= 40:
                body = "print(%s)" % name
            else:
                body = "%s = %s - %s[%d]" % (tgt, tgt, name, self.r.randrange(n))
            self.emit("if %s { %s }" % (self.gen_bool(1), body))

    def temp_tensor_stmt(self):
        # Small tensor temporaries (f32 or i64, 1 to 4 elements) through a
        # chain of operations: those the JIT computes as scalars (sinking)
        # and some it does not (`%`, comparisons), read by item(sum()),
        # element loads and shape queries. A branch that prints or mutates
        # one makes exits where it is live, which must build it.
        n = self.r.randint(1, 4)
        floats = self.chance(0.6)
        gen = (lambda: self.pick([self.gen_float, self.gen_safe_float])(2)) if floats else (lambda: self.gen_int(2))
        cur = self.fresh("tv")
        # Sometimes from a tensor the program already has (its layout is
        # guarded, not known): a global such as T or A.
        known = [t for t in self.visible("tensor")
                 if self.tensors[t][1] == ("f32" if floats else "i64") and len(self.tensors[t][0]) == 1]
        if known and self.chance(0.3):
            t = self.pick(known)
            self.emit("let %s = %s %s" % (cur, t, "* 1.0" if floats else "+ 0"))
            n = self.tensors[t][0][0]
        else:
            self.emit("let %s = tensor([%s])" % (cur, ", ".join(gen() for _ in range(n))))
        shape = [n]
        f_ops = ["{t} * {f}", "{t} + {t}", "{t} - {i}", "{t} / {f}", "sqrt({t} * {t} + 1.0)", "-{t}",
                 "exp({t} * 0.001)", "{t} * tensor([{same}])", "zeros([2, 1]) + {t}", "full([{n}], {f}) - {t}"]
        i_ops = ["{t} * {i}", "{t} + {t}", "{t} - {i}", "-{t}", "{t} * tensor([{same}])"]
        for _ in range(self.r.randint(1, 3)):
            # `%` is not computed element by element: what it reads stays allocated.
            op = "{t} % 3" if self.chance(0.1) else self.pick(f_ops if floats else i_ops)
            nxt = self.fresh("tv")
            same = ", ".join(gen() for _ in range(shape[-1]))
            self.emit("let %s = %s" % (nxt, op.format(t=cur, f=self.float_lit(), i=self.int_lit(), n=shape[-1],
                                                       same=same)))
            if op.startswith("zeros"):
                shape = [2] + shape
            cur = nxt
        tgt = self.any_int_target()
        if floats:
            self.emit("%s = %s + int(item(sum(%s)) > 0.5) + numel(%s)" % (tgt, tgt, cur, cur))
        else:
            self.emit("%s = %s + item(sum(%s)) + len(%s) + %s[%s]" % (
                tgt, tgt, cur, cur, cur, ", ".join(str(self.r.randrange(k)) for k in shape)))
        if self.chance(0.5) and self.cur_mult <= 40:
            body = self.pick(["print(item(sum(%s)), %s)" % (cur, cur),
                              "%s[%s] = %s\n%sprint(%s)" % (cur, ", ".join("0" for _ in shape),
                                                             "1.5" if floats else "7", "  " * (self.ind + 1), cur)])
            self.emit("if %s {\n%s%s\n%s}" % (self.gen_bool(1), "  " * (self.ind + 1), body, "  " * self.ind))

    def list_stmt_simple(self):
        l = self.pick(self.visible("ilist"))
        if self.chance(0.6):
            self.emit("%s[%s %% len(%s)] = %s" % (l, self.gen_int(1), l, self.gen_int(1)))
        else:
            tgt = self.any_int_target()
            self.emit("%s = %s + %s" % (tgt, tgt, self.list_read(l, 1)))

    def any_int_target(self):
        vs = self.visible("int", mutable=True)
        if vs:
            return self.pick(vs)
        name = self.fresh("v")
        self.emit("let %s = 0" % name)
        self.declare_local(name, "int")
        return name

    def dyn_stmt(self, loopvar):
        # a loop-carried variable whose type changes mid-loop
        vs = self.visible("dyn", mutable=True)
        if not vs:
            return
        v = self.pick(vs)
        K = self.r.randint(0, 80)
        k = self.r.randrange(6)
        if k == 0:   # int -> float -> ...
            self.emit('if type(%s) == "int" { %s = %s + %s } elif type(%s) == "float" { %s = %s * 1.5 } '
                      'else { %s = 0 }' % (v, v, v, self.gen_int(2), v, v, v, v))
            self.emit("if %s == %d { %s = %s }" % (loopvar, K, v, self.gen_float(1)))
        elif k == 1:  # int -> str
            self.emit('if %s > %d { %s = "s" + str(%s) } elif type(%s) == "int" { %s = %s + 1 } '
                      'else { %s = 0 }' % (loopvar, K, v, loopvar, v, v, v, v))
        elif k == 2:  # nil -> int
            self.emit("if %s == nil { %s = %s } elif type(%s) == \"int\" { %s = (%s * 3 + %s) %% 1000 } "
                      "else { %s = nil }" % (v, v, loopvar, v, v, v, loopvar, v))
        elif k == 3:
            self.emit("%s = %s" % (v, self.gen_any(1)))
        else:
            # alternates between int and float every few iterations
            nv = self.visible("num", mutable=True)
            tgt = self.pick(nv) if nv else v
            self.emit("if %s %% %d == %d { %s = %s } else { %s = %s }" % (
                loopvar, self.r.randint(2, 5), self.r.randint(0, 1), tgt, self.gen_int(1), tgt,
                self.gen_float(1)))
            self.emit("%s = %s" % (tgt, self.pick(["%s + 1" % tgt, "%s * 2" % tgt, "%s - %s" % (tgt, loopvar),
                                                   "%s / 2" % tgt, "%s // 3" % tgt, "-%s" % tgt])))

    def if_stmt(self, budget, depth, loopvar):
        if loopvar and self.chance(0.6):
            K = self.r.randint(0, 120)
            cond = "%s %s %d" % (loopvar, self.pick([">", ">=", "<", "=="]), K)
        else:
            cond = self.gen_bool()
        self.emit("if %s {" % cond)
        self.block(budget, depth + 1, loopvar, nstmts=self.r.randint(1, 3))
        while self.chance(0.35):
            if loopvar and self.chance(0.5):
                self.emit("} elif %s %% %d == %d {" % (loopvar, self.r.randint(2, 9), self.r.randint(0, 1)))
            else:
                self.emit("} elif %s {" % self.gen_bool())
            self.block(budget, depth + 1, loopvar, nstmts=self.r.randint(1, 2))
        if self.chance(0.5):
            self.emit("} else {")
            self.block(budget, depth + 1, loopvar, nstmts=self.r.randint(1, 2))
        self.emit("}")

    def for_range(self, maxtrip):
        form = self.r.randrange(4)
        if self.chance(0.06):
            # bounds near the ends of the int64 range
            n = self.r.randint(0, min(maxtrip, 40))
            if self.chance(0.5):
                return "range(%d, %d)" % (INT64_MAX - n, INT64_MAX), n
            if self.chance(0.5):
                start = -INT64_MAX + n - 1
                start_s = str(start) if start > -INT64_MAX - 1 else "-%d - 1" % INT64_MAX
                return "range(%s, -%d - 1, -1)" % (start_s, INT64_MAX), n
            s = 2**62 + self.r.randint(0, 5)
            a, b = -INT64_MAX + self.r.randint(0, 9), INT64_MAX - self.r.randint(0, 9)
            return "range(%d, %d, %d)" % (a, b, s), range_len(a, b, s)
        if form == 0:
            n = self.r.randint(0, maxtrip)
            return "range(%d)" % n, n
        if form == 1:
            a = self.r.randint(-50, 50)
            b = a + self.r.randint(-3, maxtrip)
            return "range(%d, %d)" % (a, b), range_len(a, b, 1)
        if form == 2:
            s = self.r.randint(2, 7)
            a = self.r.randint(-60, 60)
            b = a + self.r.randint(-3, maxtrip * s)
            return "range(%d, %d, %d)" % (a, b, s), range_len(a, b, s)
        s = -self.r.randint(1, 5)
        a = self.r.randint(-30, 200)
        b = a - self.r.randint(-3, maxtrip * -s)
        return "range(%d, %d, %d)" % (a, b, s), range_len(a, b, s)

    def loop_stmt(self, budget, depth):
        maxtrip = min(300, budget)
        if maxtrip < 2:
            return
        k = self.r.random()
        if k < 0.7:
            rng, trip = self.for_range(maxtrip)
            while trip > maxtrip:
                rng, trip = self.for_range(maxtrip)
            i = self.fresh("i")
            self.emit("for %s in %s {" % (i, rng))
            self.scopes.append({i: "int"})
            self.loopvars.append(i)
            self.loop_body(budget // max(trip, 1), depth, i, trip)
            self.loopvars.pop()
            self.scopes.pop()
            self.emit("}")
        elif k < 0.8:
            ls = self.visible("ilist") + self.visible("mlist")
            if not ls or budget < 30:
                return
            l = self.pick(ls)
            x = self.fresh("x")
            self.emit("for %s in %s {" % (x, l))
            t = "int" if self.lookup(l) == "ilist" else "dyn_ro"
            self.scopes.append({x: t})
            self.loopvars.append(x)
            self.cur_mult_stack.append(self.cur_mult)
            self.cur_mult *= 30
            self.block(budget // 30, depth + 1, None, nstmts=self.r.randint(1, 3))
            if t == "dyn_ro" and self.cur_mult < 200:
                self.emit("  print(%s)" % x)
            self.cur_mult = self.cur_mult_stack.pop()
            self.loopvars.pop()
            self.scopes.pop()
            self.emit("}")
        else:
            w = self.fresh("w")
            n = self.r.randint(0, maxtrip)
            self.emit("let %s = 0" % w)
            # declared in the current block; at top level that is a global
            self.declare_var(w, "int_ro")
            if self.chance(0.5):
                self.emit("while %s < %d {" % (w, n))
            else:
                self.emit("while true {")
                self.emit("  if %s >= %d { break }" % (w, n))
            self.ind += 1
            self.emit("%s += 1" % w)
            self.scopes.append({"%s" % w: "int"})
            self.loopvars.append(w)
            if self.chance(0.5):
                self.emit("if %s %% %d == %d { continue }" % (w, self.r.randint(2, 6), self.r.randint(0, 1)))
            if self.chance(0.4):
                self.emit("if %s > %d { break }" % (w, self.r.randint(0, maxtrip + 10)))
            self.ind -= 1
            self.loop_body(budget // max(n, 1), depth, w, n, opened=False)
            self.loopvars.pop()
            self.scopes.pop()
            self.emit("}")

    def declare_var(self, name, typ):
        if self.scopes:
            self.scopes[-1][name] = typ
        else:
            self.globals[name] = typ

    def loop_body(self, budget, depth, loopvar, trip, opened=True):
        self.cur_mult_stack.append(self.cur_mult)
        self.cur_mult *= max(trip, 1)
        self.ind += 1
        self.scopes.append({})
        # print at some iterations
        if self.cur_mult <= 40 and self.chance(0.5):
            self.print_stmt()
        elif self.cur_mult <= 3000 and self.chance(0.7):
            p = max(2, self.cur_mult // 40)
            self.emit("if %s %% %d == %d {" % (loopvar, p, self.r.randint(0, p - 1)))
            self.ind += 1
            self.print_stmt()
            self.ind -= 1
            self.emit("}")
        n = self.r.randint(2, 6)
        for _ in range(n):
            self.stmt(budget, depth + 1, loopvar)
        if self.chance(0.15):
            self.emit("if %s == %d { %s }" % (loopvar, self.r.randint(0, 100), self.pick(["break", "continue"])))
        self.scopes.pop()
        self.ind -= 1
        self.cur_mult = self.cur_mult_stack.pop()

    def block(self, budget, depth, loopvar, nstmts):
        self.ind += 1
        self.scopes.append({})
        for _ in range(nstmts):
            self.stmt(budget, depth, loopvar)
        self.scopes.pop()
        self.ind -= 1

    def stmt(self, budget, depth, loopvar):
        if (self.profile != "classic" and loopvar and self.cur_mult <= WORK_LIMIT // 4
                and self.chance(OBJ_RATES[self.profile][1])):
            self.obj_group_stmt(loopvar)
            return
        k = self.r.random()
        if self.simple:
            # traceable subset: scalar arithmetic, list element access, calls,
            # branches that flip, type changes; no inner loops or tensor stores
            if k < 0.4:
                self.assign_stmt()
            elif k < 0.5:
                self.let_stmt()
            elif k < 0.6 and self.visible("ilist"):
                self.list_stmt_simple()
            elif k < 0.63:
                self.temp_list_stmt()
            elif k < 0.65:
                self.temp_tensor_stmt()
            elif k < 0.7 and loopvar:
                self.dyn_stmt(loopvar)
            elif k < 0.8 and depth < 4:
                self.if_stmt(budget, depth, loopvar)
            elif k < 0.95:
                self.call_stmt(budget)
            else:
                self.assign_stmt()
            return
        if k < 0.25:
            self.assign_stmt()
        elif k < 0.35:
            self.let_stmt()
        elif k < 0.45:
            self.list_stmt()
        elif k < 0.47:
            self.temp_list_stmt()
        elif k < 0.5:
            self.temp_tensor_stmt()
        elif k < 0.6 and loopvar:
            self.dyn_stmt(loopvar)
        elif k < 0.7 and depth < 5:
            self.if_stmt(budget, depth, loopvar)
        elif k < 0.8 and depth < 4 and budget >= 4:
            self.loop_stmt(budget, depth)
        elif k < 0.9:
            self.call_stmt(budget)
        elif k < 0.95 and self.cur_mult <= 40:
            self.print_stmt()
        else:
            self.assign_stmt()

    def call_stmt(self, budget):
        k = self.r.random()
        if k < 0.3 and self.fnglobals:
            g = self.pick(sorted(self.fnglobals))
            ar = self.fnglobals[g]
            tgt = self.any_int_target()
            self.emit("%s = %s(%s)" % (tgt, g, ", ".join(self.gen_int(1) for _ in range(ar))))
            return
        if k < 0.4 and self.polys:
            f = self.pick(self.polys)
            vs = self.visible("num", mutable=True)
            args = ", ".join(self.gen_num(1) for _ in range(f.nparams))
            if vs:
                self.emit("%s = %s(%s)" % (self.pick(vs), f.name, args))
            else:
                self.emit("print(%s(%s))" % (f.name, args)) if self.cur_mult <= 40 else None
            return
        if k < 0.5 and "rec" in self.globals_fn:
            tgt = self.any_int_target()
            self.emit("%s = %s + rec(%s %% %d, %s)" % (tgt, tgt, self.gen_int(1), self.r.randint(2, 9),
                                                       self.gen_int(2)))
            return
        fs = [f for f in self.funcs if f.cost * self.cur_mult <= WORK_LIMIT]
        if not fs:
            return
        f = self.pick(fs)
        if self.chance(0.7):
            tgt = self.any_int_target()
            self.emit("%s = %s" % (tgt, self.call(f, 0)))
        else:
            self.emit(self.call(f, 0))
