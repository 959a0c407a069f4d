// Scenario 1-2 against etcd with no library logic: one gRPC channel, one lease, and per cycle
// exactly the two Txns deadbolt sends for an uncontended Mutex (put-if-absent with a read of
// the first contender; delete guarded by the create revision). With --statements 1, also the
// watch deadbolt keeps on a holding's key, so that a deletion that is not its release is heard
// (Watches::own): one Watch stream for the client, read by a thread of its own, and per thread
// one watch on its key, created after its first grant and kept, which then hears every
// release. What the library adds to a cycle is then deadbolt's row against this one; what the
// watch costs is this row against the bare Txns. (deadbolt's lease KeepAlive stream is left
// out: at a 30 s TTL it speaks every 10 s, not per cycle.)
#include <grpcpp/grpcpp.h>

#include <mutex>
#include <stdexcept>
#include <thread>

#include "backends/etcd/keys.hpp"
#include "backends/etcd/txn.hpp"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "scenarios.hpp"

namespace deadbolt::bench {
namespace {

template <class Call>
void must(Call&& call, const char* what) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (grpc::Status st = call(ctx); !st.ok())
        throw std::runtime_error(std::string("bench: etcd ") + what + ": " + st.error_message());
}

// The client's one Watch stream and the thread that reads it, as a plain gRPC user keeps one.
class KeptWatches {
  public:
    explicit KeptWatches(etcdserverpb::Watch::Stub& stub) : rw_(stub.Watch(&ctx_)) {
        reader_ = std::thread([this] {
            etcdserverpb::WatchResponse r;
            while (rw_->Read(&r)) {
            }  // each release's deletion is read, as a client that keeps the watch reads it
        });
    }
    ~KeptWatches() {
        ctx_.TryCancel();
        reader_.join();
    }
    KeptWatches(const KeptWatches&) = delete;
    KeptWatches& operator=(const KeptWatches&) = delete;

    // Deletions of key from revision `from` on, as deadbolt's holding watches (deletes only).
    void watch(const std::string& key, std::int64_t from) {
        etcdserverpb::WatchRequest req;
        auto* c = req.mutable_create_request();
        c->set_key(key);
        c->set_start_revision(from);
        c->add_filters(etcdserverpb::WatchCreateRequest::NOPUT);
        std::lock_guard lock(write_);
        if (!rw_->Write(req)) throw std::runtime_error("bench: etcd Watch stream broke");
    }

  private:
    grpc::ClientContext ctx_;
    std::unique_ptr<
        grpc::ClientReaderWriter<etcdserverpb::WatchRequest, etcdserverpb::WatchResponse>>
        rw_;
    std::mutex write_;
    std::thread reader_;
};

}  // namespace

int cycle_raw_etcd(const Args& a) {
    auto ch = grpc::CreateChannel("ipv4:" + a.etcd, grpc::InsecureChannelCredentials());
    auto kv = etcdserverpb::KV::NewStub(ch);
    auto leases = etcdserverpb::Lease::NewStub(ch);
    etcdserverpb::LeaseGrantRequest grant;
    grant.set_ttl(30);
    etcdserverpb::LeaseGrantResponse lease;
    must([&](grpc::ClientContext& c) { return leases->LeaseGrant(&c, grant, &lease); }, "lease");
    auto watch_stub = etcdserverpb::Watch::NewStub(ch);
    std::unique_ptr<KeptWatches> kept;
    if (a.statements) kept = std::make_unique<KeptWatches>(*watch_stub);
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        auto dir =
            detail::lock_dir("", a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t));
        auto key = detail::contender_key(dir, lease.id());
        bool watching = !kept;
        while (now_ns() < a.until_ns) {
            auto t0 = now_ns();
            etcdserverpb::TxnRequest acquire;
            detail::require(acquire, key, etcdserverpb::Compare::CREATE, 0);
            auto* put = acquire.add_success()->mutable_request_put();
            put->set_key(key);
            put->set_value("0123456789abcdef0123456789abcdef");
            put->set_lease(lease.id());
            detail::first_contenders(acquire.add_success(), dir, 1);
            acquire.add_failure()->mutable_request_range()->set_key(key);
            detail::first_contenders(acquire.add_failure(), dir, 1);
            etcdserverpb::TxnResponse got;
            must([&](grpc::ClientContext& c) { return kv->Txn(&c, acquire, &got); }, "Txn");
            if (!watching) kept->watch(key, got.header().revision() + 1), watching = true;
            etcdserverpb::TxnRequest release;
            detail::require(release, key, etcdserverpb::Compare::CREATE, got.header().revision());
            release.add_success()->mutable_request_delete_range()->set_key(key);
            etcdserverpb::TxnResponse gone;
            must([&](grpc::ClientContext& c) { return kv->Txn(&c, release, &gone); }, "Txn");
            lat.push_back(double(now_ns() - t0) / 1000);
        }
    });
    return 0;
}

}  // namespace deadbolt::bench
