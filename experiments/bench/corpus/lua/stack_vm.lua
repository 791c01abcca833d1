-- stack_vm: a small stack-machine interpreter. An assembler turns a text program (one
-- instruction per line, labels, comments) into a flat array of ints, then the VM loop
-- dispatches on the opcode with an if/elseif chain over a data stack, registers and a call
-- stack. The program sums gcd(i, 360) * (i % 7) mod 1000003 over i < N, calling a gcd routine.
-- Prints the result and the number of instructions executed. Addresses, registers and the
-- stack pointer are 0-based as in the other twins; arrays are indexed with +1.

local OPS = {"push", "load", "store", "add", "sub", "mul", "mod", "lt", "jz", "jmp", "call",
             "ret", "halt", "dup", "pop"}

local PROGRAM = {
  "      push 0", "      store 0      # i = 0", "      push 0", "      store 1      # acc = 0",
  "label loop", "      load 0", "      load 2", "      lt", "      jz end",
  "      load 0", "      push 360", "      call gcd     # gcd(i, 360)",
  "      load 0", "      push 7", "      mod", "      mul", "      load 1", "      add",
  "      push 1000003", "      mod", "      store 1",
  "      load 0", "      push 1", "      add", "      store 0", "      jmp loop",
  "label end", "      load 1", "      halt",
  "label gcd           # ( a b -- gcd(a, b) )", "      dup", "      jz gcd_done",
  "      store 4", "      store 3", "      load 4", "      load 3", "      load 4", "      mod",
  "      jmp gcd", "label gcd_done", "      pop", "      ret"}

local function words(line)
  local out = {}
  local cur = ""
  for i = 1, #line do
    local c = line:sub(i, i)
    if c == "#" then break end
    if c == " " then
      if #cur > 0 then out[#out + 1] = cur; cur = "" end
    else
      cur = cur .. c
    end
  end
  if #cur > 0 then out[#out + 1] = cur end
  return out
end

local function opcode(name)
  for i = 1, #OPS do
    if OPS[i] == name then return i - 1 end
  end
  error("unknown op " .. name)
end

local function lookup(labels, name)
  for _, pair in ipairs(labels) do
    if pair[1] == name then return pair[2] end
  end
  error("unknown label " .. name)
end

local function assemble(src)
  local labels = {}
  local pc = 0
  for _, line in ipairs(src) do
    local w = words(line)
    if #w > 0 then
      if w[1] == "label" then labels[#labels + 1] = {w[2], pc} else pc = pc + 2 end
    end
  end
  local code = {}
  for _, line in ipairs(src) do
    local w = words(line)
    if #w > 0 and w[1] ~= "label" then
      code[#code + 1] = opcode(w[1])
      local first = w[2] and w[2]:sub(1, 1)
      if #w == 1 then
        code[#code + 1] = 0
      elseif first >= "0" and first <= "9" then
        code[#code + 1] = tonumber(w[2])
      else
        code[#code + 1] = lookup(labels, w[2])
      end
    end
  end
  return code
end

local function execute(code, regs)
  local stack = {}
  for i = 1, 64 do stack[i] = 0 end
  local sp = 0
  local calls = {}
  local pc = 0
  local steps = 0
  while true do
    local op = code[pc + 1]
    local arg = code[pc + 2]
    pc = pc + 2
    steps = steps + 1
    if op == 0 then stack[sp + 1] = arg; sp = sp + 1
    elseif op == 1 then stack[sp + 1] = regs[arg + 1]; sp = sp + 1
    elseif op == 2 then sp = sp - 1; regs[arg + 1] = stack[sp + 1]
    elseif op == 3 then sp = sp - 1; stack[sp] = stack[sp] + stack[sp + 1]
    elseif op == 4 then sp = sp - 1; stack[sp] = stack[sp] - stack[sp + 1]
    elseif op == 5 then sp = sp - 1; stack[sp] = stack[sp] * stack[sp + 1]
    elseif op == 6 then sp = sp - 1; stack[sp] = stack[sp] % stack[sp + 1]
    elseif op == 7 then
      sp = sp - 1
      if stack[sp] < stack[sp + 1] then stack[sp] = 1 else stack[sp] = 0 end
    elseif op == 8 then sp = sp - 1; if stack[sp + 1] == 0 then pc = arg end
    elseif op == 9 then pc = arg
    elseif op == 10 then calls[#calls + 1] = pc; pc = arg
    elseif op == 11 then pc = calls[#calls]; calls[#calls] = nil
    elseif op == 12 then sp = sp - 1; return stack[sp + 1], steps
    elseif op == 13 then stack[sp + 1] = stack[sp]; sp = sp + 1
    elseif op == 14 then sp = sp - 1
    else error("bad opcode " .. op) end
  end
end

local n = tonumber(arg and arg[1]) or 800000
local code = assemble(PROGRAM)
local regs = {}
for i = 1, 8 do regs[i] = 0 end
regs[3] = n
local result, steps = execute(code, regs)
print(string.format("code size %d", #code))
print(string.format("result %d", result))
print(string.format("steps %d", steps))
