// Promise: what a lock keeps under a nemesis, as the checker judges it.
#pragma once

namespace deadbolt::torture {

struct Promise {
    bool exclusion = false;  // no two holders within their validity
    bool fences = false;     // fences increase; no stale fenced write accepted
    int capacity = 1;        // exclusion means no more than this many holders at once
};

}  // namespace deadbolt::torture
