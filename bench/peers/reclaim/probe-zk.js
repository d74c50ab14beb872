// Ask attestor-core for its default ZK operator (as its prover and its
// attestor do in Node) and make it load its circuit: ChaCha20, snarkjs.
const { makeDefaultZkOperator } = require('@reclaimprotocol/attestor-core/lib/utils/zk')
const op = makeDefaultZkOperator('chacha20', 'snarkjs', console)
op.generateWitness({ key: new Uint8Array(32), nonce: new Uint8Array(12), counter: 1,
  in: new Uint8Array(64), out: new Uint8Array(64) })
  .then(() => console.log('witness ok'))
  .catch((e) => { console.error('FAILED:', e.message); process.exit(1) })
