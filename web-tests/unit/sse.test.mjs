// The dashboard's server-sent-events parser (sse.js): events however the stream is cut
// into chunks, multi-line data, comments, and the three line endings.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sseParser } from '../../crates/stead-server/src/request/http/assets/js/sse.js';

/** Feeds `chunks` to a fresh parser; answers the [type, data] pairs it dispatched. */
function parse(chunks) {
  const events = [];
  const feed = sseParser((type, data) => events.push([type, data]));
  for (const chunk of chunks) feed(chunk);
  return events;
}

const STREAM =
  ': keep-alive\n\n' +
  'event: hello\ndata: {"version":"0.1.0"}\n\n' +
  'event: run\ndata: {"id":1,"status":"running"}\n\n' +
  ':\n' +
  'data: first\ndata: second\n\n' +
  'event: changed\ndata: {}\n\n';

const EXPECTED = [
  ['hello', '{"version":"0.1.0"}'],
  ['run', '{"id":1,"status":"running"}'],
  ['message', 'first\nsecond'],
  ['changed', '{}'],
];

test('a whole stream in one chunk', () => {
  assert.deepEqual(parse([STREAM]), EXPECTED);
});

test('the stream cut at every point into two chunks', () => {
  for (let i = 0; i <= STREAM.length; i += 1) {
    assert.deepEqual(parse([STREAM.slice(0, i), STREAM.slice(i)]), EXPECTED, `cut at ${i}`);
  }
});

test('the stream fed one character at a time', () => {
  assert.deepEqual(parse([...STREAM]), EXPECTED);
});

test('the stream cut at every pair of points into three chunks', () => {
  for (let i = 0; i <= STREAM.length; i += 7) {
    for (let j = i; j <= STREAM.length; j += 1) {
      assert.deepEqual(parse([STREAM.slice(0, i), STREAM.slice(i, j), STREAM.slice(j)]), EXPECTED, `cut at ${i}, ${j}`);
    }
  }
});

test('an event is dispatched only at the blank line that ends it', () => {
  const events = [];
  const feed = sseParser((type, data) => events.push([type, data]));
  feed('event: run\ndata: {"id":2}\n');
  assert.deepEqual(events, []);
  feed('\n');
  assert.deepEqual(events, [['run', '{"id":2}']]);
});

test('data lines join with newlines, and an empty data line counts', () => {
  assert.deepEqual(parse(['data: a\ndata:\ndata: c\n\n']), [['message', 'a\n\nc']]);
});

test('comments and unknown fields are ignored; a block without data dispatches nothing', () => {
  assert.deepEqual(parse([': a comment\nid: 7\nretry: 1000\nevent: run\n\n']), []);
  assert.deepEqual(parse([':comment\ndata: x\n: another\n\n']), [['message', 'x']]);
});

test('the type applies to its own event only', () => {
  assert.deepEqual(parse(['event: run\ndata: 1\n\ndata: 2\n\n']), [['run', '1'], ['message', '2']]);
});

test('one space after the colon is dropped, further ones kept; no space is fine', () => {
  assert.deepEqual(parse(['data:tight\n\n', 'data:  two\n\n', 'event:run\ndata: x:y\n\n']), [
    ['message', 'tight'],
    ['message', ' two'],
    ['run', 'x:y'],
  ]);
});

test('a line without a colon is a field with an empty value', () => {
  assert.deepEqual(parse(['data\ndata\n\n']), [['message', '\n']]);
});

test('CRLF line endings, with chunks cut between CR and LF', () => {
  const crlf = STREAM.replace(/\n/g, '\r\n');
  assert.deepEqual(parse([crlf]), EXPECTED);
  for (let i = 0; i <= crlf.length; i += 1) {
    assert.deepEqual(parse([crlf.slice(0, i), crlf.slice(i)]), EXPECTED, `cut at ${i}`);
  }
  // Cut right after a CR: the LF that follows ends the same line, not another (empty) one.
  assert.deepEqual(parse(['data: a\r', '\ndata: b\r\n\r\n']), [['message', 'a\nb']]);
});

test('CR line endings: a CR ends a line once what follows it is known', () => {
  const events = [];
  const feed = sseParser((type, data) => events.push([type, data]));
  feed('event: run\rdata: 1\r\r');
  // The final CR could be the first half of a CRLF: it waits for the next character.
  assert.deepEqual(events, []);
  feed('data: 2\r\r');
  assert.deepEqual(events, [['run', '1']]);
  feed('\n');
  assert.deepEqual(events, [['run', '1'], ['message', '2']]);
});

test('mixed line endings in one stream', () => {
  assert.deepEqual(parse(['event: a\r\ndata: 1\n\r\nevent: b\rdata: 2\n\n']), [['a', '1'], ['b', '2']]);
});
