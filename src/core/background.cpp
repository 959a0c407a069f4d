#include "core/background.hpp"

#include <pthread.h>

#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

namespace deadbolt::detail {
namespace {

struct Orphan {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> returned;
};

struct Orphanage {
    std::mutex m;
    std::vector<Orphan> orphans;
};

// Never destroyed: the exit handler runs among the static destructors.
Orphanage& orphanage() {
    static auto* o = new Orphanage;
    return *o;
}

void join_orphans() noexcept {
    std::vector<Orphan> all;
    {
        std::lock_guard lk(orphanage().m);
        all.swap(orphanage().orphans);
    }
    for (auto& o : all) {
        if (o.thread.get_id() == std::this_thread::get_id())
            o.thread.detach();  // exit() called from an orphan's own work: it ends with us
        else
            o.thread.join();
    }
}

void adopt(Orphan o) noexcept {
    std::vector<Orphan> ended;
    try {
        std::lock_guard lk(orphanage().m);
        auto& all = orphanage().orphans;
        // Those that returned are joined now (a moment at most): orphans do not pile up.
        for (auto it = all.begin(); it != all.end();) {
            if (it->returned->load() && it->thread.get_id() != std::this_thread::get_id()) {
                ended.push_back(std::move(*it));
                it = all.erase(it);
            } else {
                ++it;
            }
        }
        all.push_back(std::move(o));
    } catch (const std::exception&) {
        if (o.thread.joinable()) o.thread.detach();  // no memory to keep it: as before
    }
    for (auto& e : ended) e.thread.join();
    // Registered after all the thread used was built, so at exit it runs before their
    // destructors do.
    (void)std::atexit(join_orphans);
}

}  // namespace

Background::Background(std::function<void()> body, const char* name)
    : returned_(std::make_shared<std::atomic<bool>>(false)) {
    thread_ = std::thread([body = std::move(body), returned = returned_, name] {
        if (*name) (void)::pthread_setname_np(::pthread_self(), name);  // a name is a courtesy
        body();
        returned->store(true);
    });
}

Background& Background::operator=(Background&& other) noexcept {
    if (this != &other) {
        end();
        thread_ = std::move(other.thread_);
        returned_ = std::move(other.returned_);
    }
    return *this;
}

Background::~Background() {
    if (running()) adopt({std::move(thread_), std::move(returned_)});
}

void Background::end() noexcept {
    if (!running()) return;
    if (id() == std::this_thread::get_id())
        adopt({std::move(thread_), std::move(returned_)});
    else
        thread_.join();
}

}  // namespace deadbolt::detail
