-- union_find: disjoint sets in two flat arrays (parent, rank). Merges random edges in batches
-- with union by rank and a recursive find with path compression, reporting the component count
-- after each batch and the largest component; then builds a minimum spanning forest (Kruskal)
-- over weighted edges bucketed by weight, with an iterative path-halving find.
-- Node numbers are 0-based (arrays indexed with +1).
local floor = math.floor
local seed = 8

-- Park-Miller minimal standard generator (31 bits)
local function rand(n)
  seed = seed * 48271 % 2147483647
  return seed % n
end

local function find(parent, x)
  local p = parent[x + 1]
  if p == x then return x end
  local root = find(parent, p)
  parent[x + 1] = root
  return root
end

local function find_halving(parent, x)
  while parent[x + 1] ~= x do
    parent[x + 1] = parent[parent[x + 1] + 1]
    x = parent[x + 1]
  end
  return x
end

local function union(parent, rank, a, b)
  local ra = find(parent, a)
  local rb = find(parent, b)
  if ra == rb then return false end
  if rank[ra + 1] < rank[rb + 1] then parent[ra + 1] = rb
  elseif rank[ra + 1] > rank[rb + 1] then parent[rb + 1] = ra
  else parent[rb + 1] = ra; rank[ra + 1] = rank[ra + 1] + 1 end
  return true
end

local function fresh(n)
  local parent = {}
  for i = 1, n do parent[i] = i - 1 end
  return parent
end

local n = tonumber(arg and arg[1]) or 150000
local parent = fresh(n)
local rank = {}
for i = 1, n do rank[i] = 0 end
local components = n
for batch = 0, 4 do
  for e = 1, floor(n / 5) do
    if union(parent, rank, rand(n), rand(n)) then components = components - 1 end
  end
  local sizes = {}
  for i = 1, n do sizes[i] = 0 end
  local largest = 0
  for i = 0, n - 1 do
    local r = find(parent, i) + 1
    sizes[r] = sizes[r] + 1
    if sizes[r] > largest then largest = sizes[r] end
  end
  print(string.format("batch %d components %d largest %d", batch, components, largest))
end

local buckets = {}
for w = 1, 1000 do buckets[w] = {} end
for e = 1, 3 * n do
  local u = rand(n)
  local v = (u + 1 + rand(n - 1)) % n
  local b = buckets[rand(1000) + 1]
  b[#b + 1] = {u, v}
end
local p2 = fresh(n)
local weight, used = 0, 0
for w = 0, 999 do
  local b = buckets[w + 1]
  for k = 1, #b do
    local edge = b[k]
    local ru = find_halving(p2, edge[1])
    local rv = find_halving(p2, edge[2])
    if ru ~= rv then
      if ru < rv then p2[rv + 1] = ru else p2[ru + 1] = rv end
      weight = weight + w
      used = used + 1
    end
  end
end
print(string.format("spanning forest edges %d weight %d trees %d", used, weight, n - used))
