/* flexmbs viewer: draws a flexmbs scene document (flexmbs/viewer/scene.py) with three.js.
 *
 * Each body's pose at deflection scale K follows the kinematic chain
 *   T_i(K) = T_p(K) M_P(K) J_i M_O(K)^-1,   M(K) = [Rx Ry Rz(K th) C_0 | s_0 + K d],
 * J_i the joint's motion (from the run, independent of K); a beam's centre line in its
 * body axes is P + K d, a finite-element body's surface X + K Phi_t eta (its nodes'
 * translations, x = Phi eta). K = 1 is the run's kinematics exactly.
 */
(function () {
  'use strict';
  const THREE = window.THREE;

  function decode(item) {
    const raw = atob(item.b64);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    const kinds = { float32: Float32Array, float64: Float64Array, uint32: Uint32Array };
    return new kinds[item.dtype](bytes.buffer);
  }

  const data = JSON.parse(document.getElementById('flexmbs-scene').textContent);
  const optionsNode = document.getElementById('flexmbs-options');
  const options = optionsNode ? JSON.parse(optionsNode.textContent || '{}') : {};

  const times = decode(data.time);
  const nt = times.length;
  const bodies = data.bodies;
  const nb = bodies.length;
  const relative = decode(data.relative);
  const markerElastic = decode(data.markerElastic);
  const nElastic = data.markerElastic.shape[1] || 0;
  const deflection = decode(data.deflection);
  const nPoints = data.deflection.shape[1] || 0;
  const fieldValues = decode(data.fieldValues);
  const feCoordinates = decode(data.feCoordinates);
  const nFe = data.feCoordinates.shape[1] || 0;
  const nFields = data.fields.length;
  const size = data.size;

  const state = {
    frame: 0,
    playing: false,
    speed: 1.0,
    scale: options.scale !== undefined ? options.scale : data.scale.value,
    field: options.field || 'none',
    showFrames: true,
    showJoints: true,
    showMeshes: true,
    showGrid: true,
    showEdges: true,
    showMarkers: true,
    clock: times[0],
  };

  // ---- the page ----
  const root = document.getElementById('flexmbs-viewer');
  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.domElement.className = 'fx-3d';
  root.appendChild(renderer.domElement);
  const world = new THREE.Scene();
  world.background = new THREE.Color(0xf4f5f7);
  const camera = new THREE.PerspectiveCamera(35, 1, 1e-3, 1e4);
  camera.up.set(0, 0, 1);
  const controls = new THREE.OrbitControls(camera, renderer.domElement);
  controls.enableDamping = false;
  world.add(new THREE.HemisphereLight(0xffffff, 0x8a8f99, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.6);
  sun.position.set(0.6, -0.8, 1.4);
  world.add(sun);
  const fill = new THREE.DirectionalLight(0xffffff, 0.5);
  fill.position.set(-1, 0.7, -0.4);
  world.add(fill);

  const lo = new THREE.Vector3().fromArray(data.bounds[0]);
  const hi = new THREE.Vector3().fromArray(data.bounds[1]);
  const centre = lo.clone().add(hi).multiplyScalar(0.5);
  let radius = Math.max(0.5 * lo.distanceTo(hi), 1e-3);

  // ground grid in the x-y plane, below the arm
  const gridStep = Math.pow(10, Math.floor(Math.log10(radius / 2)));
  const gridCells = Math.max(4, Math.ceil((2.4 * radius) / gridStep / 2) * 2);
  const grid = new THREE.GridHelper(gridCells * gridStep, gridCells, 0xb8bec8, 0xd9dde3);
  grid.rotation.x = Math.PI / 2;
  grid.position.set(centre.x, centre.y, Math.min(lo.z, 0));
  world.add(grid);

  // ---- materials and shared shapes ----
  const mat = (color, extra) => new THREE.MeshStandardMaterial(
    Object.assign({ color: color, roughness: 0.55, metalness: 0.1 }, extra || {}));
  const rigidMaterial = mat(0x8d96a6);
  const markerMaterial = mat(0x2b3240);
  const collarMaterial = mat(0x2b3240, { side: THREE.DoubleSide });
  const jointMaterial = mat(0xe08a1e);
  const cutJointMaterial = mat(0xc2410c);
  const payloadMaterial = mat(0x6b21a8);
  const axisMaterials = [mat(0xd62728), mat(0x2ca02c), mat(0x1f5fbf)];
  const beamMaterial = new THREE.MeshStandardMaterial({
    color: 0xffffff, vertexColors: true, roughness: 0.5, metalness: 0.05, side: THREE.DoubleSide });
  const BEAM_RGB = [0.16, 0.42, 0.78];
  const feMaterial = mat(0xffffff, {
    vertexColors: true, side: THREE.DoubleSide, flatShading: true, roughness: 0.5, metalness: 0.05,
    polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1 });
  // the elements' edges: each drawn as the wireframe of the triangle (a, b, a)
  const edgeMaterial = mat(0x000000, { wireframe: true, emissive: 0x123a6b, roughness: 1, metalness: 0 });
  // a node drawn as a dot: the octahedron of its radius
  const COLLAR_AXIS = new THREE.Vector3(0, 1, 0);  // the axis of three.js's cylinder
  const DOT = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];
  const DOT_FACES = [[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4], [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]];

  function cylinderBetween(a, b, r, material) {
    const dir = new THREE.Vector3().subVectors(b, a);
    const len = dir.length();
    const mesh = new THREE.Mesh(new THREE.CylinderGeometry(r, r, Math.max(len, 1e-9), 12), material);
    mesh.position.copy(a).addScaledVector(dir, 0.5);
    if (len > 0) mesh.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), dir.normalize());
    return mesh;
  }

  function triad(length) {
    const g = new THREE.Group();
    const r = length * 0.045;
    const axes = [new THREE.Vector3(1, 0, 0), new THREE.Vector3(0, 1, 0), new THREE.Vector3(0, 0, 1)];
    axes.forEach((axis, k) => {
      g.add(cylinderBetween(new THREE.Vector3(), axis.clone().multiplyScalar(length * 0.8), r, axisMaterials[k]));
      const cone = new THREE.Mesh(new THREE.ConeGeometry(r * 2.4, length * 0.2, 12), axisMaterials[k]);
      cone.position.copy(axis.clone().multiplyScalar(length * 0.9));
      cone.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), axis);
      g.add(cone);
    });
    g.userData.kind = 'frame';
    return g;
  }

  // ---- bodies ----
  const frameLength = 0.07 * size;
  const stickRadius = 0.006 * size;
  const groups = [];
  const beams = [];
  const feBodies = [];
  const frameGlyphs = [];
  const ringCache = {};

  function ringOf(section) {
    // points of the outline in section axes (unit half sizes) and the sides between them
    const key = section.outline;
    if (ringCache[key]) return ringCache[key];
    let pts = [], sides = [];
    if (section.outline === 'rect') {
      const c = [[1, 1], [-1, 1], [-1, -1], [1, -1]];
      for (let s = 0; s < 4; s++) {
        pts.push(c[s], c[(s + 1) % 4]);
        sides.push([2 * s, 2 * s + 1]);
      }
    } else {
      const n = 16;
      for (let k = 0; k < n; k++) {
        const a = (2 * Math.PI * k) / n;
        pts.push([Math.cos(a), Math.sin(a)]);
        sides.push([k, (k + 1) % n]);
      }
    }
    ringCache[key] = { pts: pts, sides: sides };
    return ringCache[key];
  }

  bodies.forEach((body, b) => {
    const group = new THREE.Group();
    group.name = body.name;
    group.userData = { kind: 'body', index: b, bodyKind: body.kind };
    group.matrixAutoUpdate = false;
    world.add(group);
    groups.push(group);
    const frame = triad(frameLength);
    group.add(frame);
    frameGlyphs.push(frame);
    if (body.kind === 'beam') {
      const local = decode(body.local), ay = decode(body.axisY), az = decode(body.axisZ);
      const ring = ringOf(body.section);
      const np = body.points, nr = ring.pts.length;
      const positions = new Float32Array(np * nr * 3);
      const colors = new Float32Array(np * nr * 3);
      const index = [];
      for (let i = 0; i + 1 < np; i++) {
        for (const [a, c] of ring.sides) {
          const p = i * nr + a, q = i * nr + c, p2 = (i + 1) * nr + a, q2 = (i + 1) * nr + c;
          index.push(p, q, q2, p, q2, p2);
        }
      }
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
      geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3));
      geometry.setIndex(index);
      const tube = new THREE.Mesh(geometry, beamMaterial);
      tube.name = body.name + ':tube';
      tube.frustumCulled = false;
      group.add(tube);
      // a marker: a narrow band around the tube where it sits (no mass there: no ball)
      const markers = {};
      const tubeRadius = Math.max(body.section.half[0], body.section.half[1], 0.002 * size);
      for (const [name, point] of Object.entries(body.markers || {})) {
        const collar = new THREE.Mesh(
          new THREE.CylinderGeometry(1.06 * tubeRadius, 1.06 * tubeRadius, 0.12 * tubeRadius, 32, 1, true),
          collarMaterial);
        collar.name = body.name + ':' + name;
        collar.userData.kind = 'marker';
        group.add(collar);
        markers[name] = { mesh: collar, point: point };
      }
      // a node mass: a ball of its mass at the scene's one density (payloadDensity)
      const payloads = (body.payloads || []).map((p) => {
        const ball = new THREE.Mesh(new THREE.SphereGeometry(p.radius, 24, 16), payloadMaterial);
        ball.name = body.name + ':payload';
        ball.userData.kind = 'payload';
        ball.userData.mass = p.mass;
        group.add(ball);
        return { mesh: ball, point: p.point };
      });
      beams.push({
        body: b, doc: body, local: local, ay: ay, az: az, ring: ring, np: np, nr: nr,
        first: body.firstPoint, geometry: geometry, positions: positions, colors: colors,
        markers: markers, payloads: payloads, centre: new Float32Array(np * 3),
      });
    } else if (body.kind === 'fe') {
      const local = decode(body.local), modes = decode(body.modes), tri = decode(body.triangles);
      const np = body.points, dots = tri.length === 0;
      const perNode = dots ? DOT.length : 1;
      const positions = new Float32Array(np * perNode * 3);
      const colors = new Float32Array(np * perNode * 3);
      let index;
      if (dots) {
        index = new Uint32Array(np * DOT_FACES.length * 3);
        for (let i = 0, o = 0; i < np; i++) {
          for (const face of DOT_FACES) for (const v of face) index[o++] = i * perNode + v;
        }
      } else {
        index = tri;
      }
      const geometry = new THREE.BufferGeometry();
      geometry.setAttribute('position', new THREE.BufferAttribute(positions, 3));
      geometry.setAttribute('color', new THREE.BufferAttribute(colors, 3));
      geometry.setIndex(new THREE.BufferAttribute(index, 1));
      const surface = new THREE.Mesh(geometry, feMaterial);
      surface.name = body.name + ':surface';
      surface.userData.kind = 'fe';
      surface.frustumCulled = false;
      group.add(surface);
      const edgeList = decode(body.edges);
      let edges = null;
      if (edgeList.length) {
        const ne = edgeList.length / 2, triples = new Uint32Array(3 * ne);
        for (let e = 0; e < ne; e++) {
          triples[3 * e] = edgeList[2 * e]; triples[3 * e + 1] = edgeList[2 * e + 1]; triples[3 * e + 2] = edgeList[2 * e];
        }
        const lines = new THREE.BufferGeometry();
        lines.setAttribute('position', geometry.attributes.position);  // shared: moves with it
        const up = new Float32Array(3 * np);
        for (let i = 0; i < np; i++) up[3 * i + 2] = 1;
        lines.setAttribute('normal', new THREE.BufferAttribute(up, 3));
        lines.setIndex(new THREE.BufferAttribute(triples, 1));
        edges = new THREE.Mesh(lines, edgeMaterial);
        edges.name = body.name + ':edges';
        edges.userData.kind = 'edges';
        edges.frustumCulled = false;
        group.add(edges);
      }
      const markers = [];
      for (const [name, slot] of Object.entries(body.markerSlots || {})) {
        const dot = new THREE.Mesh(new THREE.SphereGeometry(0.01 * size, 16, 12), markerMaterial);
        dot.name = body.name + ':' + name;
        dot.userData.kind = 'marker';
        group.add(dot);
        markers.push({ mesh: dot, slot: slot });
      }
      feBodies.push({
        body: b, doc: body, local: local, modes: modes, np: np, nf: body.nf, dots: dots,
        geometry: geometry, positions: positions, colors: colors, markers: markers, edges: edges,
        nodes: new Float32Array(np * 3),
      });
    } else {
      const origin = new THREE.Vector3();
      for (const [name, p] of Object.entries(body.markers || {})) {
        const end = new THREE.Vector3().fromArray(p);
        const stick = cylinderBetween(origin, end, stickRadius, rigidMaterial);
        stick.name = body.name + ':' + name;
        stick.userData.kind = 'stick';
        group.add(stick);
        const dot = new THREE.Mesh(new THREE.SphereGeometry(stickRadius * 1.8, 16, 12), markerMaterial);
        dot.position.copy(end);
        dot.userData.kind = 'stick';
        group.add(dot);
      }
      const com = new THREE.Mesh(new THREE.SphereGeometry(stickRadius * 2.2, 16, 12), rigidMaterial);
      com.position.fromArray(body.com);
      com.userData.kind = 'stick';
      group.add(com);
    }
  });

  // ---- meshes (URDF visuals) ----
  const meshObjects = [];
  for (const m of data.meshes) {
    const geometry = new THREE.BufferGeometry();
    geometry.setAttribute('position', new THREE.BufferAttribute(decode(m.vertices), 3));
    geometry.setIndex(new THREE.BufferAttribute(decode(m.faces), 1));
    geometry.computeVertexNormals();
    const material = mat(new THREE.Color(m.color[0], m.color[1], m.color[2]), {
      side: THREE.DoubleSide, transparent: m.color[3] < 1, opacity: m.color[3] });
    const mesh = new THREE.Mesh(geometry, material);
    mesh.name = m.name;
    mesh.userData.kind = 'mesh';
    mesh.matrixAutoUpdate = false;
    mesh.matrix.set(...m.pose);
    (m.body >= 0 ? groups[m.body] : world).add(mesh);
    meshObjects.push(mesh);
  }
  if (data.meshes.length) {  // the meshes show the links: thin the sticks
    groups.forEach((g) => g.traverse((o) => { if (o.userData.kind === 'stick') o.visible = false; }));
  }

  // ---- joints ----
  const jointRadius = 0.018 * size;
  const jointObjects = data.joints.map((j) => {
    const material = j.cut ? cutJointMaterial : jointMaterial;
    let geometry;
    if (j.glyph === 'hinge') geometry = new THREE.CylinderGeometry(jointRadius, jointRadius, 3 * jointRadius, 20);
    else if (j.glyph === 'slider') geometry = new THREE.BoxGeometry(1.4 * jointRadius, 4 * jointRadius, 1.4 * jointRadius);
    else geometry = new THREE.SphereGeometry(1.2 * jointRadius, 20, 14);
    const glyph = new THREE.Mesh(geometry, material);
    glyph.name = 'joint:' + j.name;
    glyph.userData.kind = 'joint';
    const turn = new THREE.Quaternion().setFromUnitVectors(
      new THREE.Vector3(0, 1, 0), new THREE.Vector3().fromArray(j.axis).normalize());
    const holder = new THREE.Group();
    holder.matrixAutoUpdate = false;
    glyph.quaternion.copy(turn);
    holder.add(glyph);
    const marker = data.markers[j.marker];
    (marker.body >= 0 ? groups[marker.body] : world).add(holder);
    return { holder: holder, marker: j.marker };
  });

  // ---- rolling disks ----
  const diskMaterial = mat(0x3f8f5a, { transparent: true, opacity: 0.85 });
  const diskObjects = (data.disks || []).map((d) => {
    const disk = new THREE.Mesh(new THREE.CylinderGeometry(d.radius, d.radius, 0.08 * d.radius, 48), diskMaterial);
    disk.name = 'disk:' + d.name;
    disk.userData.kind = 'disk';
    disk.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0), new THREE.Vector3().fromArray(d.axis).normalize());
    const holder = new THREE.Group();
    holder.matrixAutoUpdate = false;
    holder.add(disk);
    const marker = data.markers[d.marker];
    (marker.body >= 0 ? groups[marker.body] : world).add(holder);
    return { holder: holder, marker: d.marker };
  });

  // ---- kinematics ----
  const poses = bodies.map(() => new THREE.Matrix4());
  const tmp = new THREE.Matrix4(), tmp2 = new THREE.Matrix4();
  const markerRot = data.markers.map((m) => {
    const r = m.rotation;
    return new THREE.Matrix4().set(r[0], r[1], r[2], 0, r[3], r[4], r[5], 0, r[6], r[7], r[8], 0, 0, 0, 0, 1);
  });

  function cardan(a, b, c, out) {
    // Rx(a) Ry(b) Rz(c)
    const ca = Math.cos(a), sa = Math.sin(a), cb = Math.cos(b), sb = Math.sin(b);
    const cc = Math.cos(c), sc = Math.sin(c);
    return out.set(
      cb * cc, -cb * sc, sb, 0,
      ca * sc + sa * sb * cc, ca * cc - sa * sb * sc, -sa * cb, 0,
      sa * sc - ca * sb * cc, sa * cc + ca * sb * sc, ca * cb, 0,
      0, 0, 0, 1);
  }

  function markerFrame(k, f, s, out) {
    const m = data.markers[k];
    out.copy(markerRot[k]);
    let x = m.position[0], y = m.position[1], z = m.position[2];
    if (m.elastic >= 0) {
      const o = (f * nElastic + m.elastic) * 6;
      const e = markerElastic;
      cardan(s * e[o + 3], s * e[o + 4], s * e[o + 5], tmp2);
      out.premultiply(tmp2);
      x += s * e[o]; y += s * e[o + 1]; z += s * e[o + 2];
    }
    out.elements[12] = x; out.elements[13] = y; out.elements[14] = z;
    return out;
  }

  const mp = new THREE.Matrix4(), mo = new THREE.Matrix4(), jm = new THREE.Matrix4();
  function computePoses(f, s) {
    for (let b = 0; b < nb; b++) {
      const body = bodies[b];
      const o = (f * nb + b) * 12, r = relative;
      jm.set(r[o], r[o + 1], r[o + 2], r[o + 9], r[o + 3], r[o + 4], r[o + 5], r[o + 10],
        r[o + 6], r[o + 7], r[o + 8], r[o + 11], 0, 0, 0, 1);
      markerFrame(body.markerP, f, s, mp);
      markerFrame(body.markerO, f, s, mo);
      const pose = poses[b];
      if (body.parent >= 0) pose.copy(poses[body.parent]); else pose.identity();
      pose.multiply(mp).multiply(jm).multiply(mo.invert());
    }
  }

  // ---- colour map ----
  function coolwarm(x, out, k) {
    // x in [-1, 1]: blue, light grey, red
    const t = Math.max(-1, Math.min(1, x));
    const mid = [0.86, 0.86, 0.86], lowc = [0.23, 0.30, 0.75], highc = [0.71, 0.02, 0.15];
    const end = t < 0 ? lowc : highc, w = Math.abs(t);
    for (let i = 0; i < 3; i++) out[k + i] = mid[i] + (end[i] - mid[i]) * w;
  }

  function fieldIndex() {
    for (let i = 0; i < nFields; i++) if (data.fields[i].key === state.field) return i;
    return -1;
  }

  // ---- drawing a frame ----
  const p = new THREE.Vector3(), t = new THREE.Vector3(), y = new THREE.Vector3();
  const z = new THREE.Vector3(), y0 = new THREE.Vector3();
  function updateBeam(beam, f, s) {
    const c = beam.centre, L = beam.local, D = deflection;
    for (let i = 0; i < beam.np; i++) {
      const o = ((f * nPoints) + beam.first + i) * 3;
      c[3 * i] = L[3 * i] + s * D[o];
      c[3 * i + 1] = L[3 * i + 1] + s * D[o + 1];
      c[3 * i + 2] = L[3 * i + 2] + s * D[o + 2];
    }
    const half = beam.doc.section.half, pts = beam.ring.pts, nr = beam.nr;
    const fi = fieldIndex();
    const range = fi >= 0 ? data.fields[fi].range : 0;
    for (let i = 0; i < beam.np; i++) {
      const a = Math.max(i - 1, 0), b = Math.min(i + 1, beam.np - 1);
      t.set(c[3 * b] - c[3 * a], c[3 * b + 1] - c[3 * a + 1], c[3 * b + 2] - c[3 * a + 2]).normalize();
      y0.set(beam.ay[3 * i], beam.ay[3 * i + 1], beam.ay[3 * i + 2]);
      y.copy(y0).addScaledVector(t, -y0.dot(t)).normalize();
      z.crossVectors(t, y);
      p.set(c[3 * i], c[3 * i + 1], c[3 * i + 2]);
      let rgb = BEAM_RGB;
      if (fi >= 0) {
        const v = fieldValues[(f * nFields + fi) * nPoints + beam.first + i];
        rgb = [0, 0, 0];
        coolwarm(range > 0 ? v / range : 0, rgb, 0);
      }
      for (let k = 0; k < nr; k++) {
        const q = (i * nr + k) * 3;
        const u = pts[k][0] * half[0], w = pts[k][1] * half[1];
        beam.positions[q] = p.x + u * y.x + w * z.x;
        beam.positions[q + 1] = p.y + u * y.y + w * z.y;
        beam.positions[q + 2] = p.z + u * y.z + w * z.z;
        beam.colors[q] = rgb[0]; beam.colors[q + 1] = rgb[1]; beam.colors[q + 2] = rgb[2];
      }
    }
    beam.geometry.attributes.position.needsUpdate = true;
    beam.geometry.attributes.color.needsUpdate = true;
    beam.geometry.computeVertexNormals();
    beam.geometry.computeBoundingSphere();
    for (const m of Object.values(beam.markers)) {  // the collar across the centre line
      const a = Math.max(m.point - 1, 0), b = Math.min(m.point + 1, beam.np - 1);
      t.set(c[3 * b] - c[3 * a], c[3 * b + 1] - c[3 * a + 1], c[3 * b + 2] - c[3 * a + 2]).normalize();
      m.mesh.position.fromArray(c, 3 * m.point);
      m.mesh.quaternion.setFromUnitVectors(COLLAR_AXIS, t);
    }
    for (const m of beam.payloads) m.mesh.position.fromArray(c, 3 * m.point);
  }

  // a finite-element body: X + s Phi_t eta at every drawn node, in its body's axes,
  // coloured by |Phi_t eta| when the colour map is the elastic displacement
  const markerTmp = new THREE.Matrix4();
  const feRgb = [0, 0, 0];
  function updateFe(fe, f, s) {
    const L = fe.local, P = fe.modes, nf = fe.nf, x = fe.nodes;
    const eta = feCoordinates.subarray(f * nFe + fe.doc.coordinateFirst, f * nFe + fe.doc.coordinateFirst + nf);
    const fi = fieldIndex();
    const mapped = fi >= 0 && data.fields[fi].key === 'displacement';
    const range = mapped ? data.fields[fi].range : 0;
    const perNode = fe.dots ? DOT.length : 1;
    for (let i = 0; i < fe.np; i++) {
      let length2 = 0;
      for (let c = 0; c < 3; c++) {
        const r = 3 * i + c;
        let d = 0;
        for (let j = 0, o = r * nf; j < nf; j++) d += P[o + j] * eta[j];
        x[r] = L[r] + s * d;
        length2 += d * d;
      }
      if (mapped) coolwarm(range > 0 ? Math.sqrt(length2) / range : 0, feRgb, 0);
      const colour = mapped ? feRgb : BEAM_RGB;
      for (let v = 0; v < perNode; v++) fe.colors.set(colour, 3 * (i * perNode + v));
    }
    if (fe.dots) {
      const pos = fe.positions, rad = fe.doc.pointRadius;
      for (let i = 0; i < fe.np; i++) {
        for (let v = 0; v < DOT.length; v++) {
          const o = (i * DOT.length + v) * 3;
          pos[o] = x[3 * i] + rad * DOT[v][0];
          pos[o + 1] = x[3 * i + 1] + rad * DOT[v][1];
          pos[o + 2] = x[3 * i + 2] + rad * DOT[v][2];
        }
      }
    } else {
      fe.positions.set(x);
    }
    fe.geometry.attributes.color.needsUpdate = true;
    fe.geometry.attributes.position.needsUpdate = true;
    fe.geometry.computeBoundingSphere();
    for (const m of fe.markers) {
      markerFrame(m.slot, f, s, markerTmp);
      m.mesh.position.set(markerTmp.elements[12], markerTmp.elements[13], markerTmp.elements[14]);
    }
  }

  let dirty = true;
  function showFrame(f) {
    state.frame = Math.max(0, Math.min(nt - 1, f | 0));
    const s = state.scale;
    computePoses(state.frame, s);
    for (let b = 0; b < nb; b++) {
      groups[b].matrix.copy(poses[b]);
      groups[b].matrixWorldNeedsUpdate = true;
    }
    for (const beam of beams) updateBeam(beam, state.frame, s);
    for (const fe of feBodies) updateFe(fe, state.frame, s);
    for (const j of diskObjects) {
      markerFrame(j.marker, state.frame, s, j.holder.matrix);
      j.holder.matrixWorldNeedsUpdate = true;
    }
    for (const j of jointObjects) {
      markerFrame(j.marker, state.frame, s, j.holder.matrix);
      j.holder.matrixWorldNeedsUpdate = true;
    }
    updateReadouts();
    dirty = true;
  }

  // ---- camera ----
  // The corners of each mesh's box in world coordinates, as the pose shown places them.
  function meshCorners() {
    world.updateMatrixWorld(true);
    const corners = [];
    for (const m of meshObjects) {
      if (!m.geometry.boundingBox) m.geometry.computeBoundingBox();
      const b = m.geometry.boundingBox;
      for (let k = 0; k < 8; k++) {
        corners.push(new THREE.Vector3(k & 1 ? b.max.x : b.min.x, k & 2 ? b.max.y : b.min.y,
          k & 4 ? b.max.z : b.min.z).applyMatrix4(m.matrixWorld));
      }
    }
    return corners;
  }
  // The meshes reach beyond the frames and nodes the scene's bounds hold: the views
  // frame the sphere around both.
  function frameMeshes() {
    const corners = meshCorners();
    if (!corners.length) return;
    const a = lo.clone(), b = hi.clone();
    for (const c of corners) { a.min(c); b.max(c); }
    centre.copy(a).add(b).multiplyScalar(0.5);
    radius = Math.max(0.5 * a.distanceTo(b), 1e-3);
  }
  const VIEWS = {
    iso: [[1.0, -1.35, 0.85], [0, 0, 1]],
    xz: [[0, -1, 0], [0, 0, 1]],
    xy: [[0, 0, 1], [0, 1, 0]],
    yz: [[1, 0, 0], [0, 0, 1]],
  };
  function setView(name) {
    const v = VIEWS[name] || VIEWS.iso;
    const dir = new THREE.Vector3().fromArray(v[0]).normalize();
    const aspect = camera.aspect || 1;
    const fov = (camera.fov * Math.PI) / 180;
    const fit = Math.min(fov, 2 * Math.atan(Math.tan(fov / 2) * aspect));
    const distance = (1.08 * radius) / Math.sin(fit / 2);
    camera.up.fromArray(v[1]);
    camera.position.copy(centre).addScaledVector(dir, distance);
    camera.near = distance / 100;
    camera.far = distance * 100;
    camera.updateProjectionMatrix();
    controls.target.copy(centre);
    controls.update();
    dirty = true;
  }

  function resize() {
    const w = root.clientWidth || window.innerWidth, h = root.clientHeight || window.innerHeight;
    renderer.setSize(w, h, false);
    camera.aspect = w / h;
    // the arm in the middle of what the controls leave free
    const side = panel.classList.contains('fx-hidden') || panel.classList.contains('fx-folded') ? 0 : panel.offsetWidth + 8;
    if (side > 0 && side < 0.6 * w) camera.setViewOffset(w, h, -side / 2, 0, w, h);
    else camera.clearViewOffset();
    camera.updateProjectionMatrix();
    dirty = true;
  }

  // ---- controls ----
  const el = (tag, attrs, parent) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'text') e.textContent = v; else if (k === 'className') e.className = v; else e.setAttribute(k, v);
    }
    if (parent) parent.appendChild(e);
    return e;
  };
  const panel = el('div', { className: 'fx-panel' }, root);
  const head = el('div', { className: 'fx-row fx-head' }, panel);
  el('h1', { text: data.title }, head);
  const foldButton = el('button', { text: '-', title: 'fewer controls / more', className: 'fx-fold' }, head);
  if (data.source) el('div', { className: 'fx-note fx-more', text: data.source }, panel);
  el('h2', { text: 'Time' }, panel);
  const rowPlay = el('div', { className: 'fx-row' }, panel);
  const playButton = el('button', { text: 'Play', title: 'play / pause (space)' }, rowPlay);
  const timeLabel = el('span', { className: 'fx-time' }, rowPlay);
  const speedSelect = el('select', { title: 'simulated seconds per second' }, rowPlay);
  for (const v of [0.05, 0.1, 0.25, 0.5, 1, 2, 4]) el('option', { value: v, text: v + 'x' }, speedSelect);
  speedSelect.value = '1';
  const rowTime = el('div', { className: 'fx-row' }, panel);
  const timeSlider = el('input', { type: 'range', min: 0, max: Math.max(nt - 1, 0), step: 1, value: 0 }, rowTime);
  if (nt < 2) { playButton.disabled = true; timeSlider.disabled = true; speedSelect.disabled = true; }

  const more = el('div', { className: 'fx-more' }, panel);
  el('h2', { text: 'Deflection' }, more);
  const rowScale = el('div', { className: 'fx-row' }, more);
  const maxScale = Math.max(1000, 20 * data.scale.value);
  const scaleSlider = el('input', { type: 'range', min: 0, max: Math.log10(maxScale), step: 0.001 }, rowScale);
  const scaleLabel = el('span', { className: 'fx-time' }, rowScale);
  const rowScale2 = el('div', { className: 'fx-row' }, more);
  const autoButton = el('button', { text: 'x' + data.scale.value + ' (auto)' }, rowScale2);
  const trueButton = el('button', { text: 'x1 (true)' }, rowScale2);
  el('div', { className: 'fx-note', text: data.scale.describe }, more);

  el('h2', { text: 'Colour' }, more);
  const fieldSelect = el('select', {}, el('div', { className: 'fx-row' }, more));
  el('option', { value: 'none', text: 'bodies' }, fieldSelect);
  for (const f of data.fields) el('option', { value: f.key, text: f.label + (f.unit ? ' (' + f.unit + ')' : '') }, fieldSelect);
  fieldSelect.value = state.field;
  if (!beams.length && !feBodies.length) fieldSelect.disabled = true;

  el('h2', { text: 'View' }, more);
  const rowView = el('div', { className: 'fx-row' }, more);
  for (const name of ['iso', 'xz', 'xy', 'yz']) {
    const b = el('button', { text: name, title: name === 'iso' ? 'isometric' : 'along the third axis' }, rowView);
    b.addEventListener('click', () => setView(name));
  }
  const rowShow = el('div', { className: 'fx-row' }, more);
  const toggles = [['frames', 'showFrames'], ['joints', 'showJoints'], ['grid', 'showGrid']];
  if (data.meshes.length) toggles.push(['meshes', 'showMeshes']);
  if (feBodies.some((fe) => fe.edges)) toggles.push(['mesh edges', 'showEdges']);
  if (beams.some((b) => Object.keys(b.markers).length) || feBodies.some((fe) => fe.markers.length)) {
    toggles.push(['markers', 'showMarkers']);
  }
  const toggleBoxes = {};
  for (const [label, key] of toggles) {
    const l = el('label', {}, rowShow);
    const box = el('input', { type: 'checkbox' }, l);
    box.checked = state[key];
    toggleBoxes[key] = box;
    l.appendChild(document.createTextNode(' ' + label));
    box.addEventListener('change', () => { state[key] = box.checked; applyVisibility(); });
  }
  el('h2', { text: 'Bodies' }, more);
  const bodyList = el('div', { className: 'fx-bodies' }, more);
  const bodyBoxes = bodies.map((body, b) => {
    const l = el('label', {}, bodyList);
    const box = el('input', { type: 'checkbox' }, l);
    box.checked = true;
    l.appendChild(document.createTextNode(' ' + body.name + (body.kind === 'beam' ? ' (beam)' : body.kind === 'fe' ? ' (FE)' : '')));
    box.addEventListener('change', () => { groups[b].visible = box.checked; dirty = true; });
    return box;
  });
  if (beams.some((b) => b.payloads.length)) {
    el('div', { className: 'fx-note', text: 'node masses: balls of ' + (+data.payloadDensity.toPrecision(3)) +
      ' kg/m\u00b3 (volume = mass / density)' }, more);
  }
  for (const w of data.warnings || []) el('div', { className: 'fx-warn', text: w }, more);

  // legend of the colour map
  const legend = el('div', { className: 'fx-legend' }, root);
  const legendTitle = el('div', { className: 'fx-legend-title' }, legend);
  const legendBody = el('div', { className: 'fx-legend-body' }, legend);
  const legendBar = el('canvas', { width: 18, height: 160 }, legendBody);
  const legendTicks = el('div', { className: 'fx-legend-ticks' }, legendBody);
  function drawLegendBar(signed) {  // signed: -range..range, else 0..range (a length)
    const g = legendBar.getContext('2d');
    const rgb = [0, 0, 0];
    for (let i = 0; i < 160; i++) {
      coolwarm(signed ? 1 - (2 * i) / 159 : 1 - i / 159, rgb, 0);
      g.fillStyle = 'rgb(' + rgb.map((v) => Math.round(255 * v)).join(',') + ')';
      g.fillRect(0, i, 18, 1);
    }
  }
  function fmt(v) {
    if (v === 0) return '0';
    const a = Math.abs(v);
    return a >= 1e4 || a < 1e-2 ? v.toExponential(2) : v.toPrecision(3);
  }
  function updateLegend() {
    const fi = fieldIndex();
    legend.style.display = fi >= 0 ? 'block' : 'none';
    if (fi < 0) return;
    const f = data.fields[fi];
    legendTitle.textContent = f.label + (f.unit ? ' (' + f.unit + ')' : '');
    legendTicks.innerHTML = '';
    const signed = f.key !== 'displacement';
    drawLegendBar(signed);
    const ticks = signed ? [f.range, f.range / 2, 0, -f.range / 2, -f.range] : [f.range, 0.75 * f.range, f.range / 2, f.range / 4, 0];
    for (const v of ticks) el('span', { text: fmt(v) }, legendTicks);
  }

  // sensors against time, with a cursor at the frame shown
  const sensorTime = decode(data.sensorTime);
  const sensorValues = data.sensors.map((s) => decode(s.values));
  const sensorPanel = el('div', { className: 'fx-sensors' }, root);
  const sensorRow = el('div', { className: 'fx-row' }, sensorPanel);
  const sensorFold = el('button', { text: '-', title: 'hide the plot / show it', className: 'fx-fold' }, sensorRow);
  el('span', { text: 'sensor' }, sensorRow);
  const sensorSelect = el('select', {}, sensorRow);
  el('option', { value: '-1', text: data.sensors.length ? '(none)' : '(no sensors in this run)' }, sensorSelect);
  data.sensors.forEach((s, k) => el('option', { value: k, text: s.name }, sensorSelect));
  const plot = el('canvas', { width: 444, height: 170 }, sensorPanel);
  let sensorShown = -1;
  const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#7f7f7f', '#17becf'];
  function niceTicks(a, b, n) {
    if (!(b > a)) { b = a + 1; }
    const raw = (b - a) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const out = [];
    for (let v = Math.ceil(a / step) * step; v <= b + 1e-9 * step; v += step) out.push(Math.abs(v) < 1e-12 * step ? 0 : v);
    return out;
  }
  function drawPlot() {
    const g = plot.getContext('2d');
    const W = plot.width, H = plot.height;
    g.clearRect(0, 0, W, H);
    sensorPanel.classList.toggle('fx-hidden', options.panels === false || (sensorShown < 0 && !data.sensors.length));
    if (sensorShown < 0 || nt < 1) { plot.style.display = 'none'; return; }
    plot.style.display = 'block';
    const s = data.sensors[sensorShown], v = sensorValues[sensorShown];
    const m = s.labels.length, n = sensorTime.length;
    let vmin = Infinity, vmax = -Infinity;
    for (let i = 0; i < v.length; i++) { if (v[i] < vmin) vmin = v[i]; if (v[i] > vmax) vmax = v[i]; }
    if (vmin === vmax) { vmin -= 1; vmax += 1; }
    const pad = 0.06 * (vmax - vmin); vmin -= pad; vmax += pad;
    const t0 = sensorTime[0], t1 = n > 1 ? sensorTime[n - 1] : t0 + 1;
    const L = 58, R = 18, T = 20, B = 30;
    const X = (tt) => L + ((tt - t0) / (t1 - t0)) * (W - L - R);
    const Y = (vv) => T + (1 - (vv - vmin) / (vmax - vmin)) * (H - T - B);
    g.font = '10px system-ui, sans-serif';
    g.strokeStyle = '#e3e6ea'; g.fillStyle = '#56607a'; g.lineWidth = 1;
    g.textAlign = 'right'; g.textBaseline = 'middle';
    for (const yv of niceTicks(vmin, vmax, 4)) {
      g.beginPath(); g.moveTo(L, Y(yv)); g.lineTo(W - R, Y(yv)); g.stroke();
      g.fillText(fmt(yv), L - 4, Y(yv));
    }
    g.textAlign = 'center'; g.textBaseline = 'top';
    for (const xv of niceTicks(t0, t1, 5)) g.fillText(fmt(xv), X(xv), H - B + 4);
    g.fillText('t (s)', W - 24, H - 12);
    for (let c = 0; c < m; c++) {
      g.strokeStyle = PALETTE[c % PALETTE.length]; g.lineWidth = 1.4; g.beginPath();
      for (let i = 0; i < n; i++) {
        const px = X(sensorTime[i]), py = Y(v[i * m + c]);
        if (i === 0) g.moveTo(px, py); else g.lineTo(px, py);
      }
      g.stroke();
    }
    g.textAlign = 'left'; g.textBaseline = 'top';
    let x = L;
    for (let c = 0; c < m; c++) {
      const label = s.labels[c] + (s.units[c] ? ' (' + s.units[c] + ')' : '');
      g.fillStyle = PALETTE[c % PALETTE.length];
      g.fillText(label, x, 3);
      x += g.measureText(label).width + 10;
    }
    const tc = times[state.frame];
    g.strokeStyle = '#1d2330'; g.lineWidth = 1; g.setLineDash([3, 3]);
    g.beginPath(); g.moveTo(X(tc), T); g.lineTo(X(tc), H - B); g.stroke(); g.setLineDash([]);
  }
  sensorSelect.addEventListener('change', () => { sensorShown = parseInt(sensorSelect.value, 10); drawPlot(); });

  const caption = el('div', { className: 'fx-caption' }, root);

  function fold(box, button, folded) {
    box.classList.toggle('fx-folded', folded);
    button.textContent = folded ? '+' : '-';
    resize();
  }
  foldButton.addEventListener('click', () => fold(panel, foldButton, !panel.classList.contains('fx-folded')));
  sensorFold.addEventListener('click', () => fold(sensorPanel, sensorFold, !sensorPanel.classList.contains('fx-folded')));
  if ((root.clientWidth || window.innerWidth) < 820) {  // a small frame: the arm first
    panel.classList.add('fx-folded'); foldButton.textContent = '+';
    sensorPanel.classList.add('fx-folded'); sensorFold.textContent = '+';
  }

  function updateReadouts() {
    const tt = times[state.frame];
    timeLabel.textContent = 't = ' + tt.toFixed(3) + ' s';
    timeSlider.value = String(state.frame);
    scaleSlider.value = String(Math.log10(Math.max(state.scale, 1)));
    scaleLabel.textContent = 'x' + (state.scale >= 10 ? Math.round(state.scale) : state.scale.toPrecision(2));
    caption.textContent = data.title + '   t = ' + tt.toFixed(3) + ' s   deflection x' +
      (state.scale >= 10 ? Math.round(state.scale) : +state.scale.toPrecision(3));
    drawPlot();
  }

  function applyVisibility() {
    frameGlyphs.forEach((f) => { f.visible = state.showFrames; });
    jointObjects.forEach((j) => { j.holder.visible = state.showJoints; });
    meshObjects.forEach((m) => { m.visible = state.showMeshes; });
    grid.visible = state.showGrid;
    feBodies.forEach((fe) => { if (fe.edges) fe.edges.visible = state.showEdges; });
    world.traverse((o) => { if (o.userData.kind === 'marker') o.visible = state.showMarkers; });
    dirty = true;
  }

  function setScale(s) { state.scale = Math.max(0, s); showFrame(state.frame); }
  function setField(key) { state.field = key; fieldSelect.value = key; updateLegend(); showFrame(state.frame); }
  function seek(time) {
    let best = 0;
    for (let i = 1; i < nt; i++) if (Math.abs(times[i] - time) < Math.abs(times[best] - time)) best = i;
    state.clock = times[best];
    showFrame(best);
    return best;
  }
  function play() { if (nt < 2) return; state.playing = true; playButton.textContent = 'Pause'; last = null; }
  function pause() { state.playing = false; playButton.textContent = 'Play'; }

  playButton.addEventListener('click', () => (state.playing ? pause() : play()));
  timeSlider.addEventListener('input', () => { pause(); state.clock = times[+timeSlider.value]; showFrame(+timeSlider.value); });
  speedSelect.addEventListener('change', () => { state.speed = parseFloat(speedSelect.value); });
  scaleSlider.addEventListener('input', () => setScale(Math.pow(10, parseFloat(scaleSlider.value))));
  autoButton.addEventListener('click', () => setScale(data.scale.value));
  trueButton.addEventListener('click', () => setScale(1));
  fieldSelect.addEventListener('change', () => setField(fieldSelect.value));
  window.addEventListener('keydown', (e) => {
    if (e.code === 'Space' && e.target === document.body) { e.preventDefault(); state.playing ? pause() : play(); }
  });
  controls.addEventListener('change', () => { dirty = true; });
  window.addEventListener('resize', resize);

  let last = null;
  function loop(now) {
    if (state.playing) {
      if (last !== null) {
        state.clock += ((now - last) / 1000) * state.speed;
        if (state.clock > times[nt - 1]) state.clock = times[0];
        let f = state.frame;
        if (times[f] > state.clock) f = 0;
        while (f + 1 < nt && times[f + 1] <= state.clock) f++;
        if (f !== state.frame) showFrame(f);
      }
      last = now;
    }
    if (dirty) { renderer.render(world, camera); dirty = false; }
    requestAnimationFrame(loop);
  }

  // ---- what tests and tools ask of the page ----
  const api = {
    ready: false,
    data: data,
    seek: seek,
    setScale: setScale,
    setField: setField,
    setView: (name) => { setView(name); render(); },
    setBodyVisible: (name, visible) => {
      const b = bodies.findIndex((x) => x.name === name);
      if (b >= 0) { groups[b].visible = visible; bodyBoxes[b].checked = visible; dirty = true; }
    },
    showSensor: (name) => {
      sensorShown = data.sensors.findIndex((s) => s.name === name);
      sensorSelect.value = String(sensorShown);
      drawPlot();
    },
    meshesInView: () => {  // every corner of every mesh's box projects into the canvas
      camera.updateMatrixWorld(true);
      return meshCorners().every((c) => {
        const p = c.project(camera);
        return Math.abs(p.x) <= 1 && Math.abs(p.y) <= 1 && p.z <= 1;
      });
    },
    play: play,
    pause: pause,
    frame: () => state.frame,
    time: () => times[state.frame],
    scale: () => state.scale,
    frames: () => nt,
    count: (kind) => {
      let n = 0;
      world.traverse((o) => { if (o.userData.kind === kind) n++; });
      return n;
    },
    // the objects of a kind that are drawn (visible, and their parents too)
    shown: (kind) => {
      let n = 0;
      world.traverseVisible((o) => { if (o.userData.kind === kind) n++; });
      return n;
    },
    // a toggle of the View panel ('showMarkers', 'showFrames', ...) set as its box would
    setShow: (key, value) => {
      state[key] = !!value;
      if (toggleBoxes[key]) toggleBoxes[key].checked = !!value;
      applyVisibility();
    },
    // the balls and spheres a beam draws: [{name, kind, radius (m), mass (kg) or null}]
    beamSpheres: (name) => {
      const beam = beams.find((x) => x.doc.name === name);
      if (!beam) return null;
      const out = [];
      groups[beam.body].traverse((o) => {
        const g = o.geometry;
        if (g && g.type === 'SphereGeometry') {
          out.push({ name: o.name, kind: o.userData.kind || null, radius: g.parameters.radius,
                     mass: o.userData.mass === undefined ? null : o.userData.mass });
        }
      });
      return out;
    },
    bodyObjects: () => world.children.filter((o) => o.userData.kind === 'body').map((o) => o.name),
    // a beam's centre-line point k as drawn: the mean of its ring of tube vertices, in
    // global axes (m)
    drawnBeamPoint: (name, k) => {
      const beam = beams.find((x) => x.doc.name === name);
      if (!beam) return null;
      const i = k < 0 ? beam.np + k : k;
      const pos = beam.geometry.attributes.position.array;
      const v = new THREE.Vector3();
      for (let r = 0; r < beam.nr; r++) {
        v.x += pos[(i * beam.nr + r) * 3]; v.y += pos[(i * beam.nr + r) * 3 + 1]; v.z += pos[(i * beam.nr + r) * 3 + 2];
      }
      v.multiplyScalar(1 / beam.nr);
      const tube = groups[beam.body].children.find((o) => o.name === name + ':tube');
      tube.updateWorldMatrix(true, false);
      return v.applyMatrix4(tube.matrixWorld).toArray();
    },
    // the drawn nodes of a finite-element body (its surface's, or its dots' centres),
    // in global axes (m), as one flat list x0 y0 z0 x1 ...
    drawnFePoints: (name) => {
      const fe = feBodies.find((x) => x.doc.name === name);
      if (!fe) return null;
      const surface = groups[fe.body].children.find((o) => o.name === name + ':surface');
      surface.updateWorldMatrix(true, false);
      const v = new THREE.Vector3(), out = [];
      for (let i = 0; i < fe.np; i++) {
        v.fromArray(fe.nodes, 3 * i).applyMatrix4(surface.matrixWorld);
        out.push(v.x, v.y, v.z);
      }
      return out;
    },
    bodyPose: (name) => {
      const b = bodies.findIndex((x) => x.name === name);
      if (b < 0) return null;
      groups[b].updateWorldMatrix(true, false);
      return groups[b].matrixWorld.toArray();
    },
    // pixel (CSS px from the canvas's top left) of a point in global axes
    project: (xyz) => {
      camera.updateMatrixWorld();
      const v = new THREE.Vector3().fromArray(xyz).project(camera);
      const rect = renderer.domElement.getBoundingClientRect();
      return [rect.left + ((v.x + 1) / 2) * rect.width, rect.top + ((1 - v.y) / 2) * rect.height];
    },
    render: render,
  };
  function render() { renderer.render(world, camera); dirty = false; }
  window.flexmbsViewer = api;

  // ---- a live view (flexmbs/viewer/live.py): the newest frame asked for each time
  // the last one is drawn (so at the display's rate), written over frame 0 ----
  api.liveFrames = 0;
  function startLive(live) {
    for (const e of [playButton, speedSelect, rowTime]) e.style.display = 'none';
    el('h2', { text: 'Live' }, panel);
    const status = el('div', { className: 'fx-note', text: 'waiting for the loop' }, panel);
    const sliders = live.sliders || [];
    if (sliders.length) el('h2', { text: 'Inputs' }, panel);
    for (const s of sliders) {
      const row = el('div', { className: 'fx-row fx-input' }, panel);
      el('span', { className: 'fx-input-name', text: s.name }, row);
      const box = el('input', { type: 'range', min: s.low, max: s.high, step: (s.high - s.low) / 1000, value: s.value }, row);
      box.dataset.port = s.name;
      const shown = el('span', { className: 'fx-time', text: fmt(s.value) + (s.unit ? ' ' + s.unit : '') }, row);
      box.addEventListener('input', () => {
        const v = parseFloat(box.value);
        shown.textContent = fmt(v) + (s.unit ? ' ' + s.unit : '');
        fetch(live.inputs, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ [s.name]: v }) });
      });
    }
    const moving = [[relative, 'relative'], [markerElastic, 'markerElastic'], [deflection, 'deflection'],
      [fieldValues, 'fieldValues'], [feCoordinates, 'feCoordinates']];
    function ask() {
      fetch(live.frame, { cache: 'no-store' }).then((r) => r.json()).then((doc) => {
        for (const [array, key] of moving) array.set(decode(doc[key]));
        times[0] = doc.t;
        api.liveFrames += 1;
        status.textContent = 'following the loop';
        showFrame(0);
        requestAnimationFrame(ask);
      }).catch(() => { status.textContent = 'the loop\'s server is gone: trying again'; setTimeout(ask, 1000); });
    }
    requestAnimationFrame(ask);
  }
  api.setInput = (name, value) => {
    const box = root.querySelector('input[data-port="' + name + '"]');
    if (!box) return false;
    box.value = String(value);
    box.dispatchEvent(new Event('input'));
    return true;
  };

  if (options.panels === false) { panel.classList.add('fx-hidden'); sensorPanel.classList.add('fx-hidden'); }
  if (options.sensor) api.showSensor(options.sensor);
  else if (data.sensors.length) api.showSensor(data.sensors[0].name);
  resize();
  updateLegend();
  applyVisibility();
  if (options.time !== undefined) seek(options.time); else showFrame(0);
  frameMeshes();
  setView(options.view || 'iso');
  render();
  if (options.live) startLive(options.live);
  api.ready = true;
  requestAnimationFrame(loop);
})();
