# stack_vm: a small stack-machine interpreter. An assembler turns a text program (one
# instruction per line, labels, comments) into a flat list of ints, then the VM loop dispatches
# on the opcode with an if/elif chain over a data stack, registers and a call stack. The program
# sums gcd(i, 360) * (i % 7) mod 1000003 over i < N, calling a gcd routine.
# Prints the result and the number of instructions executed.
import sys

OPS = ["push", "load", "store", "add", "sub", "mul", "mod", "lt", "jz", "jmp", "call",
       "ret", "halt", "dup", "pop"]

PROGRAM = [
    "      push 0", "      store 0      # i = 0", "      push 0", "      store 1      # acc = 0",
    "label loop", "      load 0", "      load 2", "      lt", "      jz end",
    "      load 0", "      push 360", "      call gcd     # gcd(i, 360)",
    "      load 0", "      push 7", "      mod", "      mul", "      load 1", "      add",
    "      push 1000003", "      mod", "      store 1",
    "      load 0", "      push 1", "      add", "      store 0", "      jmp loop",
    "label end", "      load 1", "      halt",
    "label gcd           # ( a b -- gcd(a, b) )", "      dup", "      jz gcd_done",
    "      store 4", "      store 3", "      load 4", "      load 3", "      load 4", "      mod",
    "      jmp gcd", "label gcd_done", "      pop", "      ret"]


def words(line):
    out = []
    cur = ""
    for i in range(len(line)):
        c = line[i]
        if c == "#":
            break
        if c == " ":
            if len(cur) > 0:
                out.append(cur)
                cur = ""
        else:
            cur = cur + c
    if len(cur) > 0:
        out.append(cur)
    return out


def opcode(name):
    for i in range(len(OPS)):
        if OPS[i] == name:
            return i
    raise ValueError("unknown op " + name)


def lookup(labels, name):
    for pair in labels:
        if pair[0] == name:
            return pair[1]
    raise ValueError("unknown label " + name)


def assemble(src):
    labels = []
    pc = 0
    for line in src:
        w = words(line)
        if len(w) == 0:
            continue
        if w[0] == "label":
            labels.append([w[1], pc])
        else:
            pc += 2
    code = []
    for line in src:
        w = words(line)
        if len(w) == 0 or w[0] == "label":
            continue
        code.append(opcode(w[0]))
        if len(w) == 1:
            code.append(0)
        elif "0" <= w[1][0] <= "9":
            code.append(int(w[1]))
        else:
            code.append(lookup(labels, w[1]))
    return code


def execute(code, regs):
    stack = [0] * 64
    sp = 0
    calls = []
    pc = 0
    steps = 0
    while True:
        op = code[pc]
        arg = code[pc + 1]
        pc += 2
        steps += 1
        if op == 0:
            stack[sp] = arg
            sp += 1
        elif op == 1:
            stack[sp] = regs[arg]
            sp += 1
        elif op == 2:
            sp -= 1
            regs[arg] = stack[sp]
        elif op == 3:
            sp -= 1
            stack[sp - 1] = stack[sp - 1] + stack[sp]
        elif op == 4:
            sp -= 1
            stack[sp - 1] = stack[sp - 1] - stack[sp]
        elif op == 5:
            sp -= 1
            stack[sp - 1] = stack[sp - 1] * stack[sp]
        elif op == 6:
            sp -= 1
            stack[sp - 1] = stack[sp - 1] % stack[sp]
        elif op == 7:
            sp -= 1
            stack[sp - 1] = 1 if stack[sp - 1] < stack[sp] else 0
        elif op == 8:
            sp -= 1
            if stack[sp] == 0:
                pc = arg
        elif op == 9:
            pc = arg
        elif op == 10:
            calls.append(pc)
            pc = arg
        elif op == 11:
            pc = calls.pop()
        elif op == 12:
            sp -= 1
            return stack[sp], steps
        elif op == 13:
            stack[sp] = stack[sp - 1]
            sp += 1
        elif op == 14:
            sp -= 1
        else:
            raise ValueError("bad opcode " + str(op))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 800000
    code = assemble(PROGRAM)
    regs = [0] * 8
    regs[2] = n
    result, steps = execute(code, regs)
    print("code size", len(code))
    print("result", result)
    print("steps", steps)


main()
