// The viewer's session reducer, without a page: control messages in, state and effects out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { viewerModule } from './load.mjs';

const { emptySession, reduce } = await viewerModule('session.js');
const types = (effects) => effects.map((effect) => effect.type);
const screen = (streamId, properties = {}) => ({ streamId, connectionId: 'p', name: 'screen', properties: { videoType: 'screen', ...properties } });

function welcomed(role = 'subscriber', streams = [screen(1)]) {
  const state = emptySession();
  const effects = reduce(state, {
    type: 'welcome', connectionId: 'me', sessionId: 's1', role, streams,
    connections: [{ connectionId: 'p', role: 'publisher', data: 'name=Ada' }],
  });
  return { state, effects };
}

test('a welcome sets who this page is, the streams and who is there, then picks a stream', () => {
  const { state, effects } = welcomed();
  assert.equal(state.connectionId, 'me');
  assert.equal(state.sessionId, 's1');
  assert.deepEqual([...state.connections.entries()], [['me', { role: 'subscriber', name: 'you' }], ['p', { role: 'publisher', name: 'Ada' }]]);
  assert.equal(state.streams.get(1).ended, false);
  assert.deepEqual(types(effects), ['welcomed', 'renderViewers', 'loadSession', 'moderator', 'status', 'pickStream', 'renderStreams']);
  assert.equal(effects.find((e) => e.type === 'status').text, 'Connected');
  assert.equal(effects.find((e) => e.type === 'moderator').shown, false);
});

test('a moderator also loads the archives; an empty session waits for the screen', () => {
  const { effects } = welcomed('moderator', []);
  assert.ok(types(effects).includes('loadArchives'));
  assert.equal(effects.find((e) => e.type === 'status').text, 'Connected; waiting for the screen to be shared…');
});

test('the watched stream ending keeps the picture, says why and looks for another', () => {
  const { state } = welcomed();
  state.currentStreamId = 1;
  const effects = reduce(state, { type: 'streamDestroyed', streamId: 1, reason: 'unpublished' });
  assert.equal(state.currentStreamId, null);
  assert.equal(state.streams.get(1).ended, true);
  assert.deepEqual(types(effects), ['streamEnded', 'showPaused', 'status', 'pickStream', 'renderStreams']);
  assert.match(effects[2].text, /unpublished/);
  // Another stream's end changes nothing on screen.
  assert.deepEqual(types(reduce(state, { type: 'streamDestroyed', streamId: 9, reason: 'x' })), ['pickStream', 'renderStreams']);
});

test('people joining and leaving are named; this page itself is not announced', () => {
  const { state } = welcomed();
  const joined = reduce(state, { type: 'connectionCreated', connection: { connectionId: 'v2', role: 'subscriber', data: 'name=Grace' } });
  assert.equal(joined[0].text, 'Grace joined.');
  const left = reduce(state, { type: 'connectionDestroyed', connectionId: 'v2' });
  assert.equal(left[0].text, 'Grace left.');
  assert.equal(state.connections.has('v2'), false);
  assert.equal(reduce(state, { type: 'connectionDestroyed', connectionId: 'nobody' })[0].type, 'renderViewers');
});

test('recording starts and stops, and a moderator reloads the archives', () => {
  const { state } = welcomed('moderator');
  const started = reduce(state, { type: 'archiveStarted', archiveId: 'a1', name: 'demo' });
  assert.equal(state.recording, 'a1');
  assert.deepEqual(types(started), ['recording', 'loadArchives', 'renderStreams']);
  const stopped = reduce(state, { type: 'archiveStopped', archiveId: 'a1', status: 'available' });
  assert.equal(state.recording, null);
  assert.equal(stopped.find((e) => e.type === 'notice').text, 'Recording available.');
});

test('a paused stream is shown as paused when it is the one watched', () => {
  const { state } = welcomed();
  state.currentStreamId = 1;
  const effects = reduce(state, { type: 'streamPropertyChanged', streamId: 1, properties: { videoType: 'screen', hasVideo: false } });
  assert.equal(state.streams.get(1).properties.hasVideo, false);
  assert.ok(types(effects).includes('showPaused'));
});

test('a thinned subscription says the connection is slow and at what frame rate; a full one clears it', () => {
  const { state } = welcomed();
  state.currentStreamId = 1;
  state.streams.get(1).properties.estimatedFramesPerSecond = 5;
  const thinned = reduce(state, { type: 'subscriptionChanged', streamId: 1, highestLayer: 0, layers: 3, waitingForKeyframe: false });
  assert.equal(thinned.find((e) => e.type === 'reception').text, 'Your connection is slow: showing 1.3 fps');
  const waiting = reduce(state, { type: 'subscriptionChanged', streamId: 1, highestLayer: 0, layers: 3, waitingForKeyframe: true });
  assert.match(waiting.find((e) => e.type === 'reception').text, /waiting for a fresh picture/);
  const full = reduce(state, { type: 'subscriptionChanged', streamId: 1, highestLayer: 2, layers: 3, waitingForKeyframe: false });
  assert.equal(full.find((e) => e.type === 'reception').text, null);
  assert.ok(!types(reduce(state, { type: 'subscriptionChanged', streamId: 9, highestLayer: 0, layers: 3, waitingForKeyframe: false })).includes('reception'));
});

test('refusals that a new link would cure are fatal; a refused chat line is a notice', () => {
  const { state } = welcomed();
  const expired = reduce(state, { type: 'error', code: 'tokenExpired', message: 'the token expired' });
  assert.equal(expired[0].type, 'fatal');
  assert.match(expired[0].text, /Ask for a new viewer link/);
  assert.deepEqual(types(reduce(state, { type: 'error', code: 'invalidSignal', message: 'too long' })), ['notice', 'renderStreams']);
  assert.deepEqual(types(reduce(state, { type: 'somethingNew' })), ['renderStreams']);
});

test('chat signals are shown, other signals are not', () => {
  const { state } = welcomed();
  assert.equal(reduce(state, { type: 'signal', signalType: 'chat', data: 'hi', from: 'p' })[0].type, 'chat');
  assert.deepEqual(types(reduce(state, { type: 'signal', signalType: 'cursor', data: '1,2' })), ['renderStreams']);
});
