-- resize_in_loop: arrays that grow and shrink inside hot loops while float values are read and
-- written. A sliding window over an LCG random-walk signal keeps its samples in a queue (append
-- at the back, a head index at the front, the array rebuilt once the head passes 4096) for the
-- running mean, and a monotonic deque (remove from the back, head index at the front) for the
-- running maximum. Then a single-server queue simulation keeps the waiting customers' float
-- arrival times in an array the same way. Prints the window statistics every quarter of the
-- stream and the queue's served count, mean wait and longest queue.
-- Queue positions are 0-based as in the other twins (arrays indexed with +1).
local floor, max = math.floor, math.max
local seed = 8086

local function rand(n)
  seed = (seed * 69069 + 1) % 4294967296
  return floor(seed / 65536) % n
end

local function compact(q, head)
  local r = {}
  for i = head + 1, #q do r[#r + 1] = q[i] end
  return r
end

local function window_stats(n, w)
  local win, wh, wsum = {}, 0, 0.0
  local dv, dp, dh = {}, {}, 0
  local x = 0.0
  local mean_acc, max_acc = 0.0, 0.0
  local rebuilt = 0
  local quarter = max(1, floor(n / 4))
  for t = 0, n - 1 do
    x = x * 0.98 + (rand(2001) - 1000) / 100.0
    win[#win + 1] = x
    wsum = wsum + x
    if #win - wh > w then
      wsum = wsum - win[wh + 1]
      wh = wh + 1
    end
    while #dv > dh and dv[#dv] <= x do
      dv[#dv] = nil
      dp[#dp] = nil
    end
    dv[#dv + 1] = x
    dp[#dp + 1] = t
    if dp[dh + 1] <= t - w then dh = dh + 1 end
    if wh > 4096 then
      win = compact(win, wh)
      wh = 0
      rebuilt = rebuilt + 1
    end
    if dh > 4096 then
      dv = compact(dv, dh)
      dp = compact(dp, dh)
      dh = 0
      rebuilt = rebuilt + 1
    end
    local mean = wsum / (#win - wh)
    mean_acc = mean_acc + mean
    max_acc = max_acc + dv[dh + 1]
    if (t + 1) % quarter == 0 then
      print(string.format("t %d mean %.6f max %.6f deque %d acc %.4f %.4f",
        t + 1, mean, dv[dh + 1], #dv - dh, mean_acc, max_acc))
    end
  end
  return rebuilt
end

local function queue_sim(customers)
  local q, qh = {}, 0
  local next_arrival, busy_until = 0.0, 0.0
  local served, total_wait, longest = 0, 0.0, 0
  for c = 1, customers do
    next_arrival = next_arrival + (rand(1000) + 1) / 500.0
    while qh < #q and busy_until <= next_arrival do
      local arrived = q[qh + 1]
      qh = qh + 1
      local start = busy_until
      if arrived > start then start = arrived end
      total_wait = total_wait + (start - arrived)
      busy_until = start + (rand(1000) + 1) / 505.0
      served = served + 1
    end
    q[#q + 1] = next_arrival
    if #q - qh > longest then longest = #q - qh end
    if qh > 4096 then
      q = compact(q, qh)
      qh = 0
    end
  end
  while qh < #q do
    local arrived = q[qh + 1]
    qh = qh + 1
    local start = busy_until
    if arrived > start then start = arrived end
    total_wait = total_wait + (start - arrived)
    busy_until = start + (rand(1000) + 1) / 505.0
    served = served + 1
  end
  return served, total_wait, longest, busy_until
end

local n = tonumber(arg and arg[1]) or 4500000
local customers = tonumber(arg and arg[2]) or 1500000
local rebuilt = window_stats(n, 1000)
print(string.format("window rebuilt %d", rebuilt))
local served, total_wait, longest, finish = queue_sim(customers)
print(string.format("served %d mean wait %.6f longest queue %d end %.4f", served, total_wait / served, longest, finish))
