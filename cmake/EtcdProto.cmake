# etcd's v3 gRPC client, generated at build time from the .proto files Debian ships in
# golang-etcd-server-dev (etcd 3.4.23): nothing generated is committed. The target
# deadbolt_etcd_proto_objects holds the messages and stubs of KV, Lease, Watch and Election.
# The caller (src/backends/etcd/) found gRPC, protobuf, protoc and its plugin.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
# Installed, or unpacked into .deps/ by scripts/setup.sh (without its Go dependencies).
find_path(ETCD_PROTO_ROOT etcdserver/etcdserverpb/rpc.proto
          PATHS /usr/share/gocode/src/go.etcd.io/etcd
                ${PROJECT_SOURCE_DIR}/.deps/golang-etcd-server-dev/usr/share/gocode/src/go.etcd.io/etcd
          NO_DEFAULT_PATH
          DOC "etcd's source tree with its .proto files (Debian: golang-etcd-server-dev)")
if(NOT ETCD_PROTO_ROOT)
  return()  # the caller says what is missing: apt-get install golang-etcd-server-dev, or set ETCD_PROTO_ROOT
endif()

set(_in ${CMAKE_BINARY_DIR}/etcd_proto/in)    # stripped copies, imported as etcd/...
set(_out ${CMAKE_BINARY_DIR}/etcd_proto/gen)  # generated C++
set(_protos mvcc/mvccpb/kv auth/authpb/auth etcdserver/etcdserverpb/rpc
            etcdserver/api/v3election/v3electionpb/v3election)
set(_sources)
set(_stripped)
foreach(p ${_protos})
  get_filename_component(_dir ${_in}/etcd/${p}.proto DIRECTORY)
  add_custom_command(
    OUTPUT ${_in}/etcd/${p}.proto
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
    COMMAND Python3::Interpreter ${PROJECT_SOURCE_DIR}/cmake/strip_etcd_proto.py
            ${ETCD_PROTO_ROOT}/${p}.proto ${_in}/etcd/${p}.proto
    DEPENDS ${ETCD_PROTO_ROOT}/${p}.proto ${PROJECT_SOURCE_DIR}/cmake/strip_etcd_proto.py
    VERBATIM)
  list(APPEND _stripped ${_in}/etcd/${p}.proto)
endforeach()
foreach(p ${_protos})
  set(_gen ${_out}/etcd/${p}.pb.cc ${_out}/etcd/${p}.pb.h ${_out}/etcd/${p}.grpc.pb.cc
           ${_out}/etcd/${p}.grpc.pb.h)
  add_custom_command(
    OUTPUT ${_gen}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_out}
    COMMAND ${PROTOC} -I ${_in} --cpp_out=${_out} --grpc_out=${_out}
            --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN} etcd/${p}.proto
    DEPENDS ${_stripped}
    VERBATIM)
  list(APPEND _sources ${_out}/etcd/${p}.pb.cc ${_out}/etcd/${p}.grpc.pb.cc)
endforeach()

# Objects compiled into libdeadbolt_etcd itself, so that a program has one copy of the
# generated descriptors (a second, e.g. a test linking an archive of them next to the shared
# library, is an ODR violation that AddressSanitizer stops at). deadbolt_etcd_proto is their
# headers and dependencies, for the tests and benchmarks that speak etcd's wire directly.
add_library(deadbolt_etcd_proto_objects OBJECT ${_sources})
# protoc's files each define the same file-local tables: never in one unity batch.
set_target_properties(deadbolt_etcd_proto_objects PROPERTIES POSITION_INDEPENDENT_CODE ON
                                                             UNITY_BUILD OFF)
# Generated code: its warnings are not ours (SYSTEM also keeps them out of our builds).
target_compile_options(deadbolt_etcd_proto_objects PRIVATE -w)
target_include_directories(deadbolt_etcd_proto_objects SYSTEM PUBLIC $<BUILD_INTERFACE:${_out}>)
target_link_libraries(deadbolt_etcd_proto_objects PUBLIC PkgConfig::GRPCPP PkgConfig::PROTOBUF)
add_library(deadbolt_etcd_proto INTERFACE)
target_include_directories(deadbolt_etcd_proto SYSTEM INTERFACE $<BUILD_INTERFACE:${_out}>)
target_link_libraries(deadbolt_etcd_proto INTERFACE PkgConfig::GRPCPP PkgConfig::PROTOBUF)
add_dependencies(deadbolt_etcd_proto deadbolt_etcd_proto_objects)
