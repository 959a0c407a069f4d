#include "backends/files/store.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/files/claim.hpp"
#include "backends/files/names.hpp"

namespace deadbolt::detail {

FileStore::FileStore(ClientImpl& c, std::string dir) : client_(c), dir_(std::move(dir)) {}

std::string FileStore::path(std::string_view name) const {
    return dir_ + "/" + lock_file_name(client_.options.key_prefix, name);
}

std::mutex& FileStore::reentries_mutex() {
    static std::mutex m;
    return m;
}

std::map<std::string, FileStore::Reentry>& FileStore::reentries() {
    static std::map<std::string, Reentry> r;
    return r;
}

std::mutex& FileStore::permits_mutex() {
    static std::mutex m;
    return m;
}

std::map<std::string, std::weak_ptr<FileHolding>>& FileStore::permits_by_token() {
    static std::map<std::string, std::weak_ptr<FileHolding>> p;
    return p;
}

Status FileStore::supports(const LockSpec& spec) const {
    const auto& o = spec.options;
    if (!o.auto_renew || o.max_hold.count() > 0)
        return Status::error(
            errc::invalid_argument,
            "a file lock lasts as long as its holder's process: it cannot end by itself after "
            "a TTL (auto_renew off, max_hold); release it instead");
    if (o.lock_delay.count() > 0)
        return Status::error(errc::invalid_argument,
                             "lock_delay cannot be kept on file locks: the kernel hands a dead "
                             "holder's lock to the next one at once");
    return keeps(spec.shape);
}

Status FileStore::keeps(Shape shape) const {
    switch (shape) {
        case Shape::fair:
            return refusal("FairMutex");
        case Shape::leader:
            return refusal("LeaderElection");
        default:
            return {};
    }
}

Status FileStore::refusal(std::string_view what) const {
    std::string why = "file locks keep no more than who holds them";
    if (what == "FairMutex") why = "the kernel keeps no order among a file lock's waiters";
    if (what == "LeaderElection") why = "file locks cannot tell observers that a leader changed";
    if (what == FencedData::kWhat || what == HeldWrites::kWhat)
        why = "guard your files with the lease's fence (Lease::fence()) instead";
    return Status::error(errc::invalid_argument,
                         fmt::format("{} is not offered on file: {}; the README's table of "
                                     "primitives says which engines offer it",
                                     what, why));
}

std::unique_ptr<Claim> FileStore::open(const LockSpec& spec, std::stop_token cancel) {
    return std::make_unique<FileClaim>(*this, spec, std::move(cancel));
}

Verdict FileStore::holds(const FileHolding& h) const {
    auto files = h.files();
    if (files.empty()) return Verdict::no();
    for (const auto& f : files) {
        if (!f->still_at(f->path())) return Verdict::no();  // force-unlocked: replaced
        if (h.shared) continue;
        std::uint64_t fence = 0;
        std::string token;
        if (Status st = f->read(fence, token); !st.ok()) return Verdict::unknown(st);
        if (token != h.token && h.reentrant.empty()) return Verdict::no();
    }
    return Verdict::yes();
}

std::vector<Verdict> FileStore::extend(std::span<const Renewal> rs, Clock::time_point /*by*/) {
    // A file lock lasts while its holder's process does: renewing is checking it is ours.
    std::vector<Verdict> out;
    for (const auto& r : rs) out.push_back(holds(*static_cast<const FileHolding*>(r.holding)));
    return out;
}

std::vector<Verdict> FileStore::check(std::span<const Holding* const> hs,
                                      Clock::time_point /*by*/) {
    std::vector<Verdict> out;
    for (const auto* h : hs) out.push_back(holds(*static_cast<const FileHolding*>(h)));
    return out;
}

std::vector<Verdict> FileStore::release(std::span<const Holding* const> hs,
                                        Clock::time_point /*by*/) {
    std::vector<Verdict> out;
    for (const auto* raw : hs) {
        const auto& h = *static_cast<const FileHolding*>(raw);
        Verdict v = holds(h);
        // Closing the files lets go of their locks and wakes the waiters; a reentrant owner's
        // files close with its last hold, which the registry keeps.
        (void)h.take();
        if (!h.reentrant.empty()) {
            std::lock_guard lock(reentries_mutex());
            auto it = reentries().find(h.reentrant);
            if (it != reentries().end() && --it->second.holds <= 0) reentries().erase(it);
        }
        out.push_back(v.is == Verdict::Is::unknown ? Verdict::yes() : v);
    }
    return out;
}

void FileStore::note_permit(const std::string& token, const std::shared_ptr<FileHolding>& h) {
    std::lock_guard lock(permits_mutex());
    auto& permits = permits_by_token();
    for (auto it = permits.begin(); it != permits.end();)
        it = it->second.expired() ? permits.erase(it) : std::next(it);
    permits[token] = h;
}

Status FileStore::permit_release(const std::string& /*name*/, std::string_view id, bool& released) {
    std::shared_ptr<FileHolding> h;
    {
        std::lock_guard lock(permits_mutex());
        auto& permits = permits_by_token();
        if (auto it = permits.find(std::string(id)); it != permits.end()) h = it->second.lock();
    }
    if (!h)
        return Status::error(errc::invalid_argument,
                             "a file lock is let go of only by the process that holds it: "
                             "release the permit there");
    released = !h->take().empty();
    return {};
}

Status FileStore::permit_extend(const std::string& /*name*/, std::string_view id,
                                std::chrono::milliseconds /*keep*/, bool& extended) {
    std::lock_guard lock(permits_mutex());
    auto& permits = permits_by_token();
    auto it = permits.find(std::string(id));
    auto h = it == permits.end() ? nullptr : it->second.lock();
    extended = h && !h->files().empty();  // held while its process lives: nothing to extend
    return {};
}

Status FileStore::permits_in_use(const std::string& name, int permits, int& in_use) {
    in_use = 0;
    std::shared_ptr<LockFile> f;
    if (Status st = LockFile::open_to_read(path(name), f); !st.ok() || !f) return st;
    for (int slot = 0; slot < permits; ++slot) {
        short type = 0;
        if (Status st = f->probe(slot, type); !st.ok()) return st;
        in_use += type != F_UNLCK ? 1 : 0;
    }
    return {};
}

}  // namespace deadbolt::detail
