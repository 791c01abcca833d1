-- dijkstra_heap: builds a random directed graph (V nodes, 6 out-edges each, LCG weights) as
-- adjacency lists of {target, weight} pairs, then runs Dijkstra from several sources with a
-- hand-written binary min-heap of {dist, node} records (lazy deletion). Prints, per run, the
-- reachable count, the farthest distance and a distance checksum. Node numbers are 0-based
-- (arrays indexed with +1); the heap is 0-based as in the other twins.
local floor = math.floor
local seed = 42

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function heap_push(heap, item)
  local n = #heap
  local i = n                 -- 0-based slot of the new item
  heap[n + 1] = item
  while i > 0 do
    local parent = floor((i - 1) / 2)
    if heap[parent + 1][1] <= item[1] then break end
    heap[i + 1] = heap[parent + 1]
    i = parent
  end
  heap[i + 1] = item
end

local function heap_pop(heap)
  local top = heap[1]
  local last = heap[#heap]
  heap[#heap] = nil
  local n = #heap
  if n == 0 then return top end
  local i = 0
  while true do
    local c = 2 * i + 1
    if c >= n then break end
    if c + 1 < n and heap[c + 2][1] < heap[c + 1][1] then c = c + 1 end
    if heap[c + 1][1] >= last[1] then break end
    heap[i + 1] = heap[c + 1]
    i = c
  end
  heap[i + 1] = last
  return top
end

local function build_graph(v)
  local adj = {}
  for i = 0, v - 1 do
    local edges = {}
    edges[1] = {(i + 1) % v, 50 + rand(50)}
    for k = 1, 5 do edges[#edges + 1] = {rand(v), 1 + rand(100)} end
    adj[i + 1] = edges
  end
  return adj
end

local function dijkstra(adj, src)
  local n = #adj
  local dist, done = {}, {}
  for i = 1, n do dist[i] = -1; done[i] = false end
  local heap = {}
  dist[src + 1] = 0
  heap_push(heap, {0, src})
  while #heap > 0 do
    local top = heap_pop(heap)
    local u = top[2]
    if not done[u + 1] then
      done[u + 1] = true
      local du = top[1]
      local edges = adj[u + 1]
      for k = 1, #edges do
        local e = edges[k]
        local v = e[1]
        local nd = du + e[2]
        if dist[v + 1] < 0 or nd < dist[v + 1] then
          dist[v + 1] = nd
          heap_push(heap, {nd, v})
        end
      end
    end
  end
  return dist
end

local v = tonumber(arg and arg[1]) or 40000
local adj = build_graph(v)
local total = 0
for run = 0, 3 do
  local src = (run * 7919) % v
  local dist = dijkstra(adj, src)
  local reach, far, check = 0, 0, 0
  for i = 1, v do
    local d = dist[i]
    if d >= 0 then
      reach = reach + 1
      if d > far then far = d end
      check = (check * 17 + d) % 1000000007
    end
  end
  print(string.format("src %d reach %d far %d check %d", src, reach, far, check))
  total = (total + check) % 1000000007
end
print(string.format("total %d", total))
