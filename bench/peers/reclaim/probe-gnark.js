const { makeDefaultZkOperator } = require('@reclaimprotocol/attestor-core/lib/utils/zk')
const op = makeDefaultZkOperator('chacha20', 'gnark', console)
op.generateWitness({ key: new Uint8Array(32), nonce: new Uint8Array(12), counter: 1,
  in: new Uint8Array(64), out: new Uint8Array(64) })
  .then((w) => op.groth16Prove(w)).then(() => console.log('proof ok'))
  .catch((e) => { console.error('FAILED:', e.message); process.exit(1) })
