// Hardhat config the oracle test (test/external/hardhat-sample.test.ts) puts next to an unmodified copy of
// Hardhat 2's sample project (node_modules/hardhat/sample-projects/javascript): its contracts and tests as
// shipped, plus a `native` network pointing at a running --dev node with automine (--block-time-ms 0).
require('@nomicfoundation/hardhat-toolbox');
const { subtask } = require('hardhat/config');
const { TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD } = require('hardhat/builtin-tasks/task-names');

// The compiler comes from the npm registry (the solc package's soljson), not from binaries.soliditylang.org,
// which CI cannot reach.
subtask(TASK_COMPILE_SOLIDITY_GET_SOLC_BUILD, async (args, _hre, runSuper) => {
  const solc = require('solc');
  if (args.solcVersion !== require('solc/package.json').version) return runSuper();
  return {
    compilerPath: require.resolve('solc/soljson.js'),
    isSolcJs: true,
    version: args.solcVersion,
    longVersion: solc.version().replace(/\.Emscripten\.clang$/, ''),
  };
});

/** @type import('hardhat/config').HardhatUserConfig */
module.exports = {
  solidity: '0.8.28',
  networks: {
    native: {
      url: process.env.NATIVE_RPC_URL ?? 'http://127.0.0.1:8545',
      // The dev chain's id; the bench points this network at a Hardhat node too (chain id 31337).
      chainId: Number(process.env.NATIVE_CHAIN_ID ?? 7120),
      timeout: 60_000,
    },
  },
};
