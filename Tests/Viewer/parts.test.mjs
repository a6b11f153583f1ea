// The viewer's pure parts, without a page: when to reconnect, how long to hold sound back, which stream to
// watch, what a chat line may be.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { viewerModule } from './load.mjs';

const { reconnection, RECONNECT_DELAYS_MS } = await viewerModule('connection.js');
const { playoutDelayMs, AUDIO_TARGET_DELAY_MS, AUDIO_MAX_DELAY_MS } = await viewerModule('audio-player.js');
const { chooseStream, streamLine } = await viewerModule('stream-list.js');
const { chatRefusal, senderName, MAX_SIGNAL_DATA } = await viewerModule('chat-view.js');
const { archiveLine } = await viewerModule('archive-panel.js');

test('a lost connection retries with a growing delay, back to the first once welcomed', () => {
  let state = { attempt: 0, fatal: false };
  const delays = [];
  for (let index = 0; index < 8; index += 1) {
    const step = reconnection(state, { type: 'closed', code: 1006, reason: '' });
    assert.equal(step.action.type, 'retry');
    delays.push(step.action.delayMs);
    state = step.state;
  }
  assert.deepEqual(delays, [...RECONNECT_DELAYS_MS, 8000, 8000]);
  state = reconnection(state, { type: 'welcomed' }).state;
  assert.equal(reconnection(state, { type: 'closed', code: 1006 }).action.delayMs, RECONNECT_DELAYS_MS[0]);
});

test('a refused viewer stops, with a sentence, and never retries', () => {
  const refused = reconnection({ attempt: 3, fatal: false }, { type: 'closed', code: 1008, reason: 'token expired' });
  assert.deepEqual(refused.action, { type: 'stop', text: 'The relay refused this viewer: token expired. Ask for a new viewer link.' });
  assert.equal(reconnection(refused.state, { type: 'closed', code: 1006 }).action.type, 'stop');
  const told = reconnection({ attempt: 0, fatal: false }, { type: 'fatal' }).state;
  assert.deepEqual(reconnection(told, { type: 'closed', code: 1000 }).action, { type: 'stop', text: null });
});

test('sound waits for the pictures, within its bounds, whatever the numbers', () => {
  assert.equal(playoutDelayMs([], []), AUDIO_TARGET_DELAY_MS);
  assert.equal(playoutDelayMs([10, 12, 14], [300, 310, 320]), 310, 'as long as the pictures take (their median)');
  assert.equal(playoutDelayMs(Array.from({ length: 100 }, (_, index) => index), []), 95 + 20, 'past the 95th percentile of arrivals');
  assert.equal(playoutDelayMs([5000], [9000]), AUDIO_MAX_DELAY_MS);
  assert.equal(playoutDelayMs([NaN, Infinity, 70], [NaN]), 90, "what is not a number is left out");
});

test('the first live screen stream is watched, else the first live one', () => {
  const stream = (streamId, videoType, ended = false) => [streamId, { streamId, ended, properties: { videoType, width: 8, height: 8, codec: 'av1', estimatedFramesPerSecond: 5 } }];
  assert.equal(chooseStream(new Map([stream(1, 'camera'), stream(2, 'screen', true), stream(3, 'screen')])), 3);
  assert.equal(chooseStream(new Map([stream(1, 'camera'), stream(2, 'screen', true)])), 1);
  assert.equal(chooseStream(new Map([stream(2, 'screen', true)])), null);
  assert.equal(streamLine({ name: '', properties: { videoType: 'screen', width: 1920, height: 1080, codec: 'av1', estimatedFramesPerSecond: 5 } }), 'stream · screen 1920×1080 AV1 5 fps');
});

test('a chat line is sent unless empty or too long, and its sender named', () => {
  assert.equal(chatRefusal('hello'), null);
  assert.equal(chatRefusal('   '), '');
  assert.match(chatRefusal('é'.repeat(MAX_SIGNAL_DATA / 2 + 1)), /at most 8192 bytes/);
  const connections = new Map([['a', { name: 'Ada' }]]);
  assert.equal(senderName({ from: null }, connections), 'server');
  assert.equal(senderName({ from: 'a' }, connections), 'Ada');
});

test('a recording line says its length and size', () => {
  assert.equal(archiveLine({ status: 'started', duration: 61.4, size: 2_500_000 }), ' · recording, 61 s, 2.5 MB');
  assert.equal(archiveLine({ status: 'stopped', duration: 3, size: 12_345 }), ' · 3 s, 12 kB');
});
