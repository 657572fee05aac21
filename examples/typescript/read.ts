// Reads the Assay registry from TypeScript with the bindings `stellar contract bindings typescript`
// generates from assay_registry.wasm (scripts/ts-bindings.sh) and @stellar/stellar-sdk. Reads are
// simulations: no account, key or fee is needed.
//
// Usage: node dist/read.js <rpc-url> <network-passphrase> <registry-contract-id> <CODE-ISSUER>...
// Prints one JSON line per asset: its Stellar Asset Contract id, `get_safety`, and `is_safe` at
// severity ceilings 1 and 2 within 24 hours. Exits 64 on bad arguments, 1 on a failed read.
import { Asset, Client } from './bindings/src/index.js';

const [rpcUrl, networkPassphrase, contractId, ...assets] = process.argv.slice(2);
if (!rpcUrl || !networkPassphrase || !contractId || assets.length === 0) {
  console.error('usage: node dist/read.js <rpc-url> <network-passphrase> <registry-contract-id> <CODE-ISSUER>...');
  process.exit(64);
}

const registry = new Client({
  contractId,
  rpcUrl,
  networkPassphrase,
  allowHttp: rpcUrl.startsWith('http://'),
});

/** The registry is keyed by the token's contract address: for a classic asset, its SAC id. */
function assetContract(codeIssuer: string): string {
  const [code, issuer] = codeIssuer.split('-');
  return new Asset(code, issuer).contractId(networkPassphrase);
}

const DAY_SECS = 86_400n;

for (const name of assets) {
  const asset = assetContract(name);
  const { result: safety } = await registry.get_safety({ asset });
  const { result: safeAtLow } = await registry.is_safe({ asset, max_severity: 1, max_age_secs: DAY_SECS });
  const { result: safeAtMedium } = await registry.is_safe({ asset, max_severity: 2, max_age_secs: DAY_SECS });
  console.log(
    JSON.stringify({
      asset: name,
      contract: asset,
      safety: safety == null // no verdict: never attested, or revoked
        ? null
        : {
            severity: safety.severity,
            flags: safety.flags,
            evidence_hash: Buffer.from(safety.evidence_hash).toString('hex'),
            attested_at: safety.attested_at.toString(),
          },
      is_safe_low: safeAtLow,
      is_safe_medium: safeAtMedium,
    }),
  );
}
