// How a run's parameters read on the dashboard (labels.js): each variable as K=V and the
// arguments on one line, each quoted as a shell would need it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { paramsText, quoteArg } from '../../crates/stead-server/src/request/http/assets/js/labels.js';

test('quoteArg: plain words bare, anything else in single quotes', () => {
  assert.equal(quoteArg('--epochs=3'), '--epochs=3');
  assert.equal(quoteArg('/tmp/a.txt'), '/tmp/a.txt');
  assert.equal(quoteArg('b c'), "'b c'");
  assert.equal(quoteArg(''), "''");
  assert.equal(quoteArg('$HOME'), "'$HOME'");
  assert.equal(quoteArg("it's"), "'it'\\''s'");
});

test('paramsText: the environment as K=V lines and the arguments as one command line', () => {
  assert.deepEqual(paramsText({ env: { GREETING: 'hello world', K: 'V' }, args: ['a', 'b c'] }), {
    env: ["GREETING='hello world'", 'K=V'],
    args: "a 'b c'",
  });
  assert.deepEqual(paramsText({ args: ['x'] }), { env: [], args: 'x' }, 'the wire leaves out what is empty');
  assert.deepEqual(paramsText({ env: { A: '' } }), { env: ["A=''"], args: '' });
});
