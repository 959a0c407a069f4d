// Scenario 1-2 against etcd with no library logic: one gRPC channel, one lease, and per cycle
// exactly the two Txns deadbolt sends for an uncontended Mutex (put-if-absent with a read of
// the first contender; delete guarded by the create revision).
#include <grpcpp/grpcpp.h>

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

}  // namespace

int cycle_raw_etcd(const Args& a) {
    auto ch = grpc::CreateChannel("ipv4:" + a.etcd, grpc::InsecureChannelCredentials());
    auto kv = etcdserverpb::KV::NewStub(ch);
    auto leases = etcdserverpb::Lease::NewStub(ch);
    etcdserverpb::LeaseGrantRequest grant;
    grant.set_ttl(30);
    etcdserverpb::LeaseGrantResponse lease;
    must([&](grpc::ClientContext& c) { return leases->LeaseGrant(&c, grant, &lease); }, "lease");
    run_cycles(a, [&](int t, std::vector<double>& lat) {
        auto dir =
            detail::lock_dir("", a.key + ":" + std::to_string(a.id) + ":" + std::to_string(t));
        auto key = detail::contender_key(dir, lease.id());
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
