#!/usr/bin/env bash
# Regenerates cardarena/ (Python + .pyi stubs) from proto/. The only way generated code changes:
# never edit cardarena/ by hand. Needs the dev extra (pinned grpcio-tools and mypy-protobuf).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
bindir=$(dirname "$(command -v "$python")")
export PATH="$bindir:$PATH"   # protoc-gen-mypy and protoc-gen-mypy_grpc live beside python
rm -rf cardarena
mkdir -p cardarena
mapfile -t protos < <(cd proto && find . -name '*.proto' | sed 's|^\./||' | sort)
"$python" -m grpc_tools.protoc -Iproto \
  --python_out=. --grpc_python_out=. --mypy_out=. --mypy_grpc_out=. "${protos[@]}"
# protoc writes a _grpc module for every file; keep only those that define a service.
grep -L 'Stub' cardarena/*/v1/*_pb2_grpc.py | while read -r empty; do rm "$empty" "${empty}i"; done
# Package markers, so the generated tree imports as cardarena.<area>.v1.
find cardarena -type d | while read -r dir; do
  printf '"""Generated from proto/ by scripts/gen_proto.sh; do not edit."""\n' >"$dir/__init__.py"
done
touch cardarena/py.typed
mkdir -p cardarena/vendor
# gRPC's reflection v1 (grpcio-reflection ships only v1alpha): messages only, under
# cardarena/vendor/ so the module path cannot shadow the grpc package.
"$python" -m grpc_tools.protoc -Iproto_vendor --python_out=cardarena/vendor \
  --mypy_out=cardarena/vendor grpc/reflection/v1/reflection.proto
find cardarena/vendor -type d | while read -r dir; do
  printf '"""Generated from proto_vendor/ by scripts/gen_proto.sh; do not edit."""\n' >"$dir/__init__.py"
done
