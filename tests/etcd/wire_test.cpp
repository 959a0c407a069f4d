// The etcd backend's footing: the gRPC client generated at build time from Debian's .proto
// files talks to a real three-member cluster, both ways with etcdctl, and the server facts
// the backend is built on hold (a lease shorter than the server's minimum is rounded up
// without an error, so the backend must compare what it asked with what it got).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"
#include "etcd_cluster.hpp"

namespace {

std::unique_ptr<grpc::ClientContext> within(std::chrono::seconds s) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->set_deadline(std::chrono::system_clock::now() + s);
    return c;
}

}  // namespace

TEST(EtcdWire, TheGeneratedClientAndEtcdctlReadEachOthersWrites) {
    deadbolt::test::EtcdCluster etcd(3);
    auto ch = grpc::CreateChannel(etcd.endpoints().substr(0, etcd.endpoints().find(',')),
                                  grpc::InsecureChannelCredentials());
    auto kv = etcdserverpb::KV::NewStub(ch);

    etcdserverpb::PutRequest put;
    put.set_key("deadbolt-wire/ours");
    put.set_value("written by the generated client");
    etcdserverpb::PutResponse put_r;
    ASSERT_TRUE(kv->Put(within(std::chrono::seconds(5)).get(), put, &put_r).ok());
    EXPECT_GT(put_r.header().revision(), 0);
    std::string out;
    ASSERT_EQ(etcd.etcdctl({"get", "--print-value-only", "deadbolt-wire/ours"}, &out), 0) << out;
    EXPECT_EQ(out, "written by the generated client\n");

    ASSERT_EQ(etcd.etcdctl({"put", "deadbolt-wire/theirs", "written by etcdctl"}, &out), 0) << out;
    etcdserverpb::RangeRequest get;
    get.set_key("deadbolt-wire/theirs");
    etcdserverpb::RangeResponse get_r;
    ASSERT_TRUE(kv->Range(within(std::chrono::seconds(5)).get(), get, &get_r).ok());
    ASSERT_EQ(get_r.kvs_size(), 1);
    EXPECT_EQ(get_r.kvs(0).value(), "written by etcdctl");
    EXPECT_GT(get_r.kvs(0).create_revision(), put_r.header().revision());  // a fence's source
}

TEST(EtcdWire, ALeaseShorterThanTheServersMinimumIsRoundedUpWithoutAnError) {
    deadbolt::test::EtcdCluster etcd(1);
    auto lease = etcdserverpb::Lease::NewStub(
        grpc::CreateChannel(etcd.endpoints(), grpc::InsecureChannelCredentials()));
    etcdserverpb::LeaseGrantRequest req;
    req.set_ttl(1);
    etcdserverpb::LeaseGrantResponse r;
    ASSERT_TRUE(lease->LeaseGrant(within(std::chrono::seconds(5)).get(), req, &r).ok());
    EXPECT_TRUE(r.error().empty()) << r.error();
    EXPECT_GT(r.ttl(), 1) << "etcd 3.4 grants at least 1.5 election timeouts (2 s by default)";
}
