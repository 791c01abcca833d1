"""The deliberate runtime errors of the fuzz generator (gen_program.Gen),
placed late in a hot loop or in a nested call."""


class ErrorBlocksMixin:
    # ------------------------------------------------------------ errors
    def error_block(self):
        N = self.r.randint(60, 250)
        K = N - self.r.randint(1, 12)
        kind = self.pick(["div", "mod", "index", "nindex", "tindex", "notfn", "arity",
                          "nonbool", "pop", "assert", "strint", "overflow", "iter"])
        where = self.pick(["loop", "loop", "call", "call"])
        self.emit("# deliberate runtime error: %s in %s" % (kind, where))
        if kind == "notfn" or kind == "arity":
            if not self.funcs:
                kind = "div"
        pre = []
        if kind in ("notfn", "arity"):
            f = self.pick(self.funcs)
            cb = self.fresh("cb")
            self.emit("let %s = %s" % (cb, f.name))
            if kind == "notfn":
                pre = ["if n == K { %s = %s }" % (cb, self.pick(["5", "nil", '"str"', "[1]", "2.5"]))]
            else:
                other = [g for g in self.funcs if g.nparams != f.nparams]
                if not other:
                    pre = ["if n == K { %s = 5 }" % cb]
                else:
                    pre = ["if n == K { %s = %s }" % (cb, self.pick(other).name)]
            args = ", ".join("n" for _ in range(f.nparams))
            body = pre + ["let e = %s(%s)" % (cb, args)]
        elif kind == "nonbool":
            fl = self.fresh("flag")
            self.emit("let %s = true" % fl)
            body = ["if n == K { %s = %s }" % (fl, self.pick(["1", "nil", '"yes"', "0.0"])),
                    self.pick(["if %s { e = e + 1 }" % fl, "if n > 3 and %s { e = e + 1 }" % fl,
                               "while %s { break }" % fl, "if not %s { e = e - 1 }" % fl])]
            body = ["let e = n"] + body
        elif kind == "pop":
            pl = self.fresh("pl")
            self.emit("let %s = list(%d, 0)" % (pl, K))
            body = ["let e = pop(%s)" % pl]
        elif kind == "div":
            body = ["let e = %s // (K - n)" % self.gen_int(2)]
        elif kind == "mod":
            body = ["let e = (n * 7) % (n - K)"]
        elif kind == "index":
            body = ["let el = [1, 2.5, \"x\"]", "let e = el[(n // K) * 3]"]
        elif kind == "nindex":
            body = ["let el = list(4, n)", "let e = el[-1 - (n // K) * 4]"]
        elif kind == "tindex":
            body = ["let et = zeros([2, 3], dtype=i64)", "et[1, 2] = n", "let e = et[1, 2 + n // K]"]
        elif kind == "assert":
            body = ['assert(n < K, "n reached " + str(n))', "let e = n"]
        elif kind == "strint":
            dv = self.fresh("dv")
            self.emit('let %s = "s"' % dv)
            body = ["if n == K { %s = n }" % dv, 'let e = "v" + %s' % dv]
        elif kind == "overflow":
            self.emit("fn deep(n) { return 1 + deep(n + 1) }")
            body = ["let e = n", "if n == K { e = deep(0) }"]
        else:
            body = ["let e = 0", "let it = [1, 2]", "if n == K { it = n }", "for q in it { e = e + q }"]
        body = [s.replace("K", str(K)) for s in body]
        if where == "call":
            depth = self.r.randint(1, 3)
            self.emit("fn err0(n) {")
            for s in body:
                self.emit("  " + s)
            self.emit('  if type(e) == "int" { return e }')
            self.emit("  return 0")
            self.emit("}")
            for d in range(1, depth):
                self.emit("fn err%d(n) {" % d)
                self.emit("  let t = n * 2")
                self.emit("  return err%d(n) + t" % (d - 1))
                self.emit("}")
            acc = self.fresh("acc")
            self.emit("let %s = 0" % acc)
            self.emit("for n in range(%d) {" % N)
            self.emit("  %s = %s + err%d(n)" % (acc, acc, depth - 1))
            self.emit("  if n %% %d == 0 { print(\"err-loop\", n, %s) }" % (self.r.randint(5, 30), acc))
            self.emit("}")
            self.emit("print(%s)" % acc)
        else:
            acc = self.fresh("acc")
            self.emit("let %s = 0" % acc)
            self.emit("for n in range(%d) {" % N)
            for s in body:
                self.emit("  " + s)
            self.emit('  if type(e) == "int" { %s = %s + e }' % (acc, acc))
            self.emit("  if n %% %d == 0 { print(\"err-loop\", n, %s) }" % (self.r.randint(5, 30), acc))
            self.emit("}")
            self.emit("print(%s)" % acc)

    def program(self):
        self.header()
        self.functions()
        if self.profile == "exits":
            self.maker_functions(self.r.randint(1, 3))
        elif self.profile == "default" and self.chance(0.5):
            self.maker_functions(self.r.randint(1, 2))
        self.main()
        if self.chance(0.4 if self.profile != "exits" else 0.2):
            self.error_block()
        return "\n".join(self.lines) + "\n"
