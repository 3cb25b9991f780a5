#!/usr/bin/env bash
# Regenerates ts/grpc/gen/ from proto/ (protobuf-es message and service descriptors) after buf lint.
# Only npm packages run: @bufbuild/buf (its binary ships in the npm package @bufbuild/buf-<platform>) and
# @bufbuild/protoc-gen-es. The generated code is committed; test/grpc/proto.test.ts checks it is current.
set -euo pipefail
cd "$(dirname "$0")/../proto"
../node_modules/.bin/buf lint
rm -rf ../ts/grpc/gen
../node_modules/.bin/buf generate
echo "[gen-proto] wrote ts/grpc/gen"
