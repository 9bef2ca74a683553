#!/bin/bash
# run.sh NAME PKG VERSION [BIN] -- [ARGS...]   with env vars set by caller
NAME=$1 PKG=$2 VER=$3; shift 3
BIN=""; if [ "$1" != "--" ]; then BIN=$1; shift; fi
shift # --
D=/tmp/mcpcat/pkgs/$NAME
mkdir -p $D /tmp/mcpcat/raw /tmp/mcpcat/logs
if [ ! -d $D/node_modules/$PKG ]; then
  (cd $D && [ -f package.json ] || echo '{"private":true}' > package.json
   PUPPETEER_SKIP_DOWNLOAD=1 PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
   npm install --no-audit --no-fund --loglevel=error "$PKG@$VER" ) > /tmp/mcpcat/logs/$NAME.install 2>&1 || { echo "INSTALL FAILED $NAME"; tail -5 /tmp/mcpcat/logs/$NAME.install; exit 1; }
fi
PJ=$D/node_modules/$PKG/package.json
if [ -z "$BIN" ]; then
  BIN=$(node -e 'const p=require(process.argv[1]); const b=p.bin; console.log(typeof b==="string"?b:Object.values(b||{})[0]||p.main)' $PJ)
fi
echo "$NAME: $(node -e 'const p=require(process.argv[1]); console.log(p.name, p.version, JSON.stringify(p.license))' $PJ) bin=$BIN"
mkdir -p /tmp/mcpcat/sandbox/$NAME
cd /tmp/mcpcat/sandbox/$NAME && node /tmp/mcpcat/list.mjs /tmp/mcpcat/raw/$NAME.json -- ${NODEBIN:-node} $D/node_modules/$PKG/$BIN "$@" 2> /tmp/mcpcat/logs/$NAME.err
rc=$?; [ $rc != 0 ] && tail -20 /tmp/mcpcat/logs/$NAME.err
exit $rc
