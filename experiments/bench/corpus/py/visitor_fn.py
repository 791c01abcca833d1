# visitor_fn: closure-free visitors with function values passed as arguments. Random expression
# trees (["num", v], ["var"], ["op", k, left, right]) are walked by a generic walk(node, visit,
# acc) with different visitor functions, rewritten bottom-up by rewrite(node, fn) (constant
# folding, x*1 and x+0 removal), and evaluated through a table of operator functions; list
# helpers map/filter/fold take functions too. Prints counts and evaluation checksums.
import sys

M = 1000003


def op_add(a, b):
    return (a + b) % M


def op_sub(a, b):
    return (a - b) % M


def op_mul(a, b):
    return a * b % M


OPS = [op_add, op_sub, op_mul]
seed = 3


def rand(n):
    global seed
    seed = seed * 48271 % 2147483647
    return seed % n


def gen(depth):
    if depth == 0 or rand(10) < 3:
        if rand(3) == 0:
            return ["var"]
        return ["num", rand(4)]
    return ["op", rand(3), gen(depth - 1), gen(depth - 1)]


def walk(node, visit, acc):
    visit(node, acc)
    if node[0] == "op":
        walk(node[2], visit, acc)
        walk(node[3], visit, acc)


def count_kinds(node, acc):
    if node[0] == "num":
        acc[0] += 1
    elif node[0] == "var":
        acc[1] += 1
    else:
        acc[2] += 1


def sum_consts(node, acc):
    if node[0] == "num":
        acc[0] += node[1]


def rewrite(node, f):
    if node[0] != "op":
        return f(node)
    return f(["op", node[1], rewrite(node[2], f), rewrite(node[3], f)])


def simplify(node):
    if node[0] != "op":
        return node
    l = node[2]
    r = node[3]
    if l[0] == "num" and r[0] == "num":
        return ["num", OPS[node[1]](l[1], r[1])]
    if node[1] == 2 and r[0] == "num" and r[1] == 1:
        return l
    if node[1] == 2 and l[0] == "num" and l[1] == 1:
        return r
    if node[1] == 0 and r[0] == "num" and r[1] == 0:
        return l
    if node[1] == 0 and l[0] == "num" and l[1] == 0:
        return r
    return node


def identity(node):
    return node


def evaluate(node, x):
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        return x
    return OPS[node[1]](evaluate(node[2], x), evaluate(node[3], x))


def map_(f, xs):
    out = []
    for x in xs:
        out.append(f(x))
    return out


def filter_(pred, xs):
    out = []
    for x in xs:
        if pred(x):
            out.append(x)
    return out


def fold(f, init, xs):
    acc = init
    for x in xs:
        acc = f(acc, x)
    return acc


def is_odd(v):
    return v % 2 == 1


def square_mod(v):
    return v * v % M


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1500
    kinds = [0, 0, 0]
    kinds_after = [0, 0, 0]
    consts = [0]
    check = 0
    points = [i * 37 + 1 for i in range(16)]
    for t in range(n):
        tree = gen(9)
        walk(tree, count_kinds, kinds)
        walk(tree, sum_consts, consts)
        simple = rewrite(tree, simplify)
        same = rewrite(simple, identity)
        walk(same, count_kinds, kinds_after)
        for x in points:
            v = evaluate(tree, x)
            assert v == evaluate(simple, x), "simplify changed the value"
            check = (check * 7 + v) % M
    print("nodes before", kinds, "after", kinds_after, "constants", consts[0])
    values = map_(square_mod, points)
    print("squares", fold(op_add, 0, values), "odd", len(filter_(is_odd, values)))
    print("checksum", check)


main()
