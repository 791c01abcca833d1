-- tokenizer: generates N lines of pseudo-source text from syllables, numbers and punctuation
-- (LCG-driven), scans each line character by character into identifier, number and
-- punctuation tokens, rebuilds a normalised line (single spaces, capitalised identifiers) with
-- a string builder, and prints token counts, the number sum, extreme identifiers and a checksum.
local floor = math.floor

local SYL = {"ka", "to", "ri", "mu", "sen", "da", "lo", "qui", "ne", "bar", "zu", "ex"}
local PUNCT = {",", ".", ";", "(", ")", "=", "+", "*"}
local LOWER = "abcdefghijklmnopqrstuvwxyz"
local UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
local seed = 12345

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function gen_line()
  local s = ""
  local pieces = 6 + rand(10)
  for p = 1, pieces do
    local r = rand(10)
    if r < 6 then
      local w = ""
      for k = 1, 1 + rand(3) do w = w .. SYL[rand(#SYL) + 1] end
      s = s .. w
    elseif r < 8 then
      s = s .. string.format("%d", rand(5000))
    else
      s = s .. PUNCT[rand(#PUNCT) + 1]
    end
    if rand(4) ~= 0 then s = s .. " " end
    if rand(9) == 0 then s = s .. "  " end
  end
  return s
end

local function capital(c)
  for i = 1, 26 do
    if LOWER:sub(i, i) == c then return UPPER:sub(i, i) end
  end
  return c
end

local counts = {0, 0, 0}
local numsum = 0
local longest, smallest, largest = "", "~", ""

local function tokenize(line)
  local out = ""
  local i = 1
  local n = #line
  while i <= n do
    local c = line:sub(i, i)
    if c == " " then
      i = i + 1
    else
      if #out > 0 then out = out .. " " end
      if c >= "a" and c <= "z" then
        local word = c
        i = i + 1
        while i <= n and line:sub(i, i) >= "a" and line:sub(i, i) <= "z" do
          word = word .. line:sub(i, i)
          i = i + 1
        end
        counts[1] = counts[1] + 1
        if #word > #longest then longest = word end
        if word < smallest then smallest = word end
        if word > largest then largest = word end
        out = out .. capital(word:sub(1, 1))
        for k = 2, #word do out = out .. word:sub(k, k) end
      elseif c >= "0" and c <= "9" then
        local v = 0
        while i <= n and line:sub(i, i) >= "0" and line:sub(i, i) <= "9" do
          v = (v * 10 + tonumber(line:sub(i, i))) % 1000000007
          out = out .. line:sub(i, i)
          i = i + 1
        end
        counts[2] = counts[2] + 1
        numsum = (numsum + v) % 1000000007
      else
        counts[3] = counts[3] + 1
        out = out .. c
        i = i + 1
      end
    end
  end
  return out
end

local nlines = tonumber(arg and arg[1]) or 20000
local check, chars = 0, 0
for ln = 0, nlines - 1 do
  local line = gen_line()
  chars = chars + #line
  local norm = tokenize(line)
  check = (check * 31 + #norm * (ln + 1)) % 1000000007
  if ln == 0 then print("first: " .. norm) end
end
print(string.format("lines %d chars %d", nlines, chars))
print(string.format("idents %d numbers %d punct %d numsum %d", counts[1], counts[2], counts[3], numsum))
print("longest " .. longest .. " smallest " .. smallest .. " largest " .. largest)
print(string.format("checksum %d", check))
