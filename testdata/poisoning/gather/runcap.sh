# runcap.sh SPEC OUTNAME [args...]; env from caller
spec="$1"; out="$2"; shift 2
d=/tmp/benign/pk/$(echo "$spec" | tr '/@' '__')
pkg="${spec%@*}"
bin=$(node -e '
const p=require(process.argv[1]+"/node_modules/"+process.argv[2]+"/package.json");
let b=p.bin; if(typeof b==="string"){console.log(b)} else {const k=Object.keys(b); console.log(b[k[0]])}' "$d" "$pkg")
mkdir -p /tmp/benign/home
cd /tmp/benign/home && HOME=/tmp/benign/home timeout 120 node /tmp/benign/capture.mjs /tmp/benign/out/$out.json node "$d/node_modules/$pkg/$bin" "$@" > /tmp/benign/out/$out.log 2>&1
echo "$out rc=$? $(tail -1 /tmp/benign/out/$out.log)"
